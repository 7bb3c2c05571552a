// The training step (forward, backward, clipping, AdamW) of the benchmark model, classifier or
// decoder (bench/attention_bench_support.hpp), repeated, as bench/contention_bench.py times it
// beside other processes: with the ThreadGovernor of cpm's trainers (the default) or on a fixed
// team of OMP_NUM_THREADS threads.
//   build/bin/training_step_bench [--model classifier|decoder] [--length L] [--steps N]
//                                 [--attention favor|softmax] [--fixed | --scaling]
// Prints one line: seconds in all, steps, and the steps the governor ran on 1 and on every thread.
// --scaling instead alternates blocks of 5 steps on one thread and on OMP_NUM_THREADS threads, so
// that both see the same machine (a shared machine's speed drifts by 20 % between runs), and
// prints the seconds per step of each and their ratio, the median over the pairs of blocks.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/attention_bench_support.hpp"
#include "bench/median.hpp"
#include "parallel/thread_governor.hpp"

namespace {

double seconds_of(int steps, const std::function<double()>& step) {
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) step();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / steps;
}

// Blocks of 5 steps, alternately on one thread and on every thread.
int print_scaling(const std::function<double()>& step, int steps) {
  constexpr int kBlock = 5;
  const int threads = omp_get_max_threads();
  std::vector<double> one, all, ratio;
  for (int done = 0; done < steps; done += kBlock) {
    omp_set_num_threads(1);
    one.push_back(seconds_of(kBlock, step));
    omp_set_num_threads(threads);
    all.push_back(seconds_of(kBlock, step));
    ratio.push_back(one.back() / all.back());
  }
  std::printf(
      "seconds per step: 1 thread %.6f, %d threads %.6f; speed-up %.3f (median of %zu "
      "pairs of %d-step blocks)\n",
      cpm::bench::median(one), threads, cpm::bench::median(all), cpm::bench::median(ratio),
      ratio.size(), kBlock);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int length = 128, steps = 40;
  bool fixed = false, scaling = false;
  std::string attention = "favor", model = "classifier";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--length" && has_value) {
      length = std::atoi(argv[++i]);
    } else if (arg == "--steps" && has_value) {
      steps = std::atoi(argv[++i]);
    } else if (arg == "--model" && has_value) {
      model = argv[++i];
    } else if (arg == "--attention" && has_value) {
      attention = argv[++i];
    } else if (arg == "--fixed") {
      fixed = true;
    } else if (arg == "--scaling") {
      scaling = true;
    } else {
      std::fprintf(stderr,
                   "usage: training_step_bench [--model classifier|decoder] [--length L] "
                   "[--steps N] [--attention favor|softmax] [--fixed | --scaling]\n");
      return 2;
    }
  }
  if (length < 1 || steps < 1 || (attention != "favor" && attention != "softmax") ||
      (model != "classifier" && model != "decoder") || (model == "decoder" && length < 16)) {
    std::fprintf(stderr,
                 "training_step_bench: --length and --steps must be positive (L ≥ 16 for the "
                 "decoder), --model classifier or decoder, --attention favor or softmax\n");
    return 2;
  }
  const auto kind =
      attention == "softmax" ? cpm::AttentionKind::softmax : cpm::AttentionKind::linear;
  std::unique_ptr<cpm::bench::TrainingStepBench> classifier;
  std::unique_ptr<cpm::bench::DecoderStepBench> decoder;
  if (model == "classifier")
    classifier = std::make_unique<cpm::bench::TrainingStepBench>(kind, 32, length);
  else
    decoder = std::make_unique<cpm::bench::DecoderStepBench>(kind, 32, length);
  const auto step = [&] { return classifier ? classifier->step() : decoder->step(); };
  step();  // warm-up: first touch of every buffer
  if (scaling) return print_scaling(step, steps);
  cpm::ThreadGovernor governor;
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) {
    if (fixed) {
      step();
    } else {
      const cpm::GovernedStep governed(governor);
      step();
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "%.6f %d %lld %lld\n", seconds, steps, static_cast<long long>(governor.steps_on(1)),
      static_cast<long long>(governor.capacity() > 1 ? governor.steps_on(governor.capacity()) : 0));
  return 0;
}

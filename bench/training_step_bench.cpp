// The training step (forward, backward, clipping, AdamW) of the benchmark model, classifier or
// decoder (bench/attention_bench_support.hpp), repeated, as bench/contention_bench.py times it
// beside other processes: with the ThreadGovernor of cpm's trainers (the default) or on a fixed
// team of OMP_NUM_THREADS threads.
//   build/bin/training_step_bench [--model classifier|decoder] [--length L] [--steps N]
//                                 [--attention favor|softmax] [--fixed]
// Prints one line: seconds in all, steps, and the steps the governor ran on 1 and on every thread.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "bench/attention_bench_support.hpp"
#include "parallel/thread_governor.hpp"

int main(int argc, char** argv) {
  int length = 128, steps = 40;
  bool fixed = false;
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
    } else {
      std::fprintf(stderr,
                   "usage: training_step_bench [--model classifier|decoder] [--length L] "
                   "[--steps N] [--attention favor|softmax] [--fixed]\n");
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

// The classifier's training step (forward, backward, clipping, AdamW) of the benchmark model,
// repeated, as bench/contention_bench.py times it beside other processes: with the
// ThreadGovernor of cpm's trainers (the default) or on a fixed team of OMP_NUM_THREADS threads.
//   build/bin/training_step_bench [--length L] [--steps N] [--attention favor|softmax] [--fixed]
// Prints one line: seconds in all, steps, and the steps the governor ran on 1 and on every thread.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/attention_bench_support.hpp"
#include "parallel/thread_governor.hpp"

int main(int argc, char** argv) {
  int length = 128, steps = 40;
  bool fixed = false;
  std::string attention = "favor";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--length" && has_value) {
      length = std::atoi(argv[++i]);
    } else if (arg == "--steps" && has_value) {
      steps = std::atoi(argv[++i]);
    } else if (arg == "--attention" && has_value) {
      attention = argv[++i];
    } else if (arg == "--fixed") {
      fixed = true;
    } else {
      std::fprintf(stderr,
                   "usage: training_step_bench [--length L] [--steps N] "
                   "[--attention favor|softmax] [--fixed]\n");
      return 2;
    }
  }
  if (length < 1 || steps < 1 || (attention != "favor" && attention != "softmax")) {
    std::fprintf(stderr,
                 "training_step_bench: --length and --steps must be positive, "
                 "--attention favor or softmax\n");
    return 2;
  }
  cpm::bench::TrainingStepBench bench(
      attention == "softmax" ? cpm::AttentionKind::softmax : cpm::AttentionKind::linear, 32,
      length);
  bench.step();  // warm-up: first touch of every buffer
  cpm::ThreadGovernor governor;
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) {
    if (fixed) {
      bench.step();
    } else {
      const cpm::GovernedStep governed(governor);
      bench.step();
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "%.6f %d %lld %lld\n", seconds, steps, static_cast<long long>(governor.steps_on(1)),
      static_cast<long long>(governor.capacity() > 1 ? governor.steps_on(governor.capacity()) : 0));
  return 0;
}

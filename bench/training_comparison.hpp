#pragma once
// The table both training benchmarks print, one row per (attention, L): cpm's tokens/s, its
// achieved GFLOP/s (bench/training_flops.hpp) and their fraction of the machine's measured FMA
// throughput in float on every thread (bench/machine_peak.hpp), then for each BLAS PyTorch's
// tokens/s and cpm's ratio over it, and last the fraction of the FMA throughput a step would have
// to reach to run 5 times as fast as the fastest PyTorch build (its tokens/s × 5 × FLOPs per
// token); below the table, what each PyTorch run used.
//
// The machine's speed drifts by tens of percent within minutes when it is shared, so cpm and
// PyTorch are not timed one after the other: both models stay built, and `rounds` blocks of
// `steps` steps of each (after one such round not counted) alternate in time (PyTorch waits in its
// own process while cpm runs, and the reverse). A ratio is the median over rounds of the two
// adjacent blocks' rates; cpm's rate is the median of its blocks. Each block starts after a pause
// of kSettle, long enough for the other side's idle threads to stop spinning (OpenBLAS's threads
// spin about 2^28 cycles, libgomp's a few milliseconds), so that neither block pays for the other's
// waiting, and with one untimed step on each side: the first step after the other process ran
// finds the caches and the translation buffers filled with the other's data, a cost that training
// (step after step) does not have (cpm's first step took about 5 % longer, bench/results/transformer_speed.md).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/machine_peak.hpp"
#include "bench/median.hpp"
#include "bench/torch_anchor.hpp"

namespace cpm::bench {

// The benchmarks' command line: --rounds R, --steps N, --length L and --attention A (only the
// rows of that L and that attention, e.g. kernel-favor or softmax).
struct ComparisonArguments {
  int rounds = 5, steps = 2;
  int length = 0;         // 0: every row
  std::string attention;  // empty: every row
  bool wants(const std::string& row_attention, int row_length) const {
    return (length == 0 || length == row_length) &&
           (attention.empty() || attention == row_attention);
  }
};

// false, after the usage line, when R or N is below 1.
inline bool read_comparison_arguments(int argc, char** argv, ComparisonArguments& a) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0) a.rounds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--steps") == 0) a.steps = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--length") == 0) a.length = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--attention") == 0) a.attention = argv[i + 1];
  }
  if (a.rounds >= 1 && a.steps >= 1) return true;
  std::fprintf(stderr,
               "usage: %s [--rounds R] [--steps N] [--length L] [--attention A], R, N ≥ 1\n",
               argv[0]);
  return false;
}

class TrainingComparison {
 public:
  static constexpr std::chrono::milliseconds kSettle{300};

  TrainingComparison(int threads, int rounds, int steps)
      : threads_(threads),
        rounds_(rounds),
        steps_(steps),
        peak_(threads * measured_fma_flops_per_core<float>()) {
    std::printf("peak: measured float FMA throughput %.1f GFLOP/s on %d threads\n", peak_ * 1e-9,
                threads_);
    std::printf("%d rounds of %d cpm steps then %d PyTorch steps; medians over rounds\n", rounds_,
                steps_, steps_);
    std::printf("%-14s %6s %11s %8s %6s", "attention", "L", "cpm tok/s", "GFLOP/s", "%peak");
    for (const TorchBlas& blas : blas_)
      std::printf(" | %22s %6s", ("torch+" + blas.name).c_str(), "ratio");
    std::printf(" | %9s\n", "5x needs");
    std::fflush(stdout);
  }

  // One row for cpm's `bench` (a StepBench of bench/attention_bench_support.hpp, whose step()
  // returns seconds); `flops_per_step` and `tokens_per_step` of its step, `model` (classifier or
  // decoder) and `arguments` of the PyTorch reference script.
  template <class StepBench>
  void row(const std::string& attention, int length, StepBench& bench, double flops_per_step,
           double tokens_per_step, const std::string& model, const std::string& arguments) {
    for (int i = 0; i < 2; ++i) bench.step();  // warm-up, as the script's
    std::vector<double> cpm_rates, torch_rates(blas_.size()), ratios(blas_.size());
    for (std::size_t b = 0; b < blas_.size(); ++b) {
      TorchServer torch(model, arguments + " --threads " + std::to_string(threads_), blas_[b]);
      if (ran_on_[b].empty()) ran_on_[b] = torch.ran_on();
      std::vector<double> round_torch, round_ratio;
      // Round 0 is not counted: the first blocks after PyTorch starts run up to 4 times slower.
      for (int r = 0; r <= rounds_ && torch.ready(); ++r) {
        std::this_thread::sleep_for(kSettle);
        bench.step();  // untimed, as the script's block starts
        double seconds = 0.0;
        for (int s = 0; s < steps_; ++s) seconds += bench.step();
        const double cpm = tokens_per_step * steps_ / seconds;
        std::this_thread::sleep_for(kSettle);
        const double anchor = torch.tokens_per_second(steps_);
        if (anchor <= 0) break;
        if (r == 0) continue;
        cpm_rates.push_back(cpm);
        round_torch.push_back(anchor);
        round_ratio.push_back(cpm / anchor);
      }
      torch_rates[b] = median(round_torch);
      ratios[b] = median(round_ratio);
    }
    if (cpm_rates.empty())  // no PyTorch at all: cpm alone
      for (int r = 0; r < rounds_ * steps_; ++r)
        cpm_rates.push_back(tokens_per_step / bench.step());
    const double rate = median(cpm_rates);
    const double gflops = rate / tokens_per_step * flops_per_step * 1e-9;
    std::printf("%-14s %6d %11.0f %8.1f %5.1f%%", attention.c_str(), length, rate, gflops,
                100.0 * gflops * 1e9 / peak_);
    for (std::size_t b = 0; b < blas_.size(); ++b)
      if (torch_rates[b] > 0)
        std::printf(" | %22.0f %6.2f", torch_rates[b], ratios[b]);
      else
        std::printf(" | %22s %6s", "-", "-");
    const double fastest = *std::max_element(torch_rates.begin(), torch_rates.end());
    if (fastest > 0)
      std::printf(" | %8.1f%%\n", 100.0 * 5 * fastest / tokens_per_step * flops_per_step / peak_);
    else
      std::printf(" | %9s\n", "-");
    std::fflush(stdout);
  }

  // What each PyTorch run used (its BLAS, the BLAS's kernels and threads, ATen's kernels).
  void print_anchors() const {
    for (std::size_t b = 0; b < blas_.size(); ++b)
      std::printf("torch+%s: %s (%s)\n", blas_[b].name.c_str(), ran_on_[b].c_str(),
                  blas_[b].environment.c_str());
  }

 private:
  int threads_, rounds_, steps_;
  double peak_;
  std::vector<TorchBlas> blas_ = torch_blas_choices();
  std::vector<std::string> ran_on_ = std::vector<std::string>(blas_.size());
};

}  // namespace cpm::bench

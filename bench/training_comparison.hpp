#pragma once
// The table both training benchmarks print, one row per (attention, L): cpm's tokens/s, its
// achieved GFLOP/s (bench/training_flops.hpp) and their fraction of the machine's measured FMA
// throughput in float on every thread (bench/machine_peak.hpp), then for each BLAS PyTorch's
// tokens/s and cpm's ratio over it; below the table, what each PyTorch run used.
#include <cstdio>
#include <string>
#include <vector>

#include "bench/machine_peak.hpp"
#include "bench/torch_anchor.hpp"

namespace cpm::bench {

class TrainingComparison {
 public:
  explicit TrainingComparison(int threads)
      : threads_(threads), peak_(threads * measured_fma_flops_per_core<float>()) {
    std::printf("peak: measured float FMA throughput %.1f GFLOP/s on %d threads\n", peak_ * 1e-9,
                threads_);
    std::printf("%-14s %6s %11s %8s %6s", "attention", "L", "cpm tok/s", "GFLOP/s", "%peak");
    for (const TorchBlas& blas : blas_)
      std::printf(" | %16s %6s", ("torch+" + blas.name).c_str(), "ratio");
    std::printf("\n");
    std::fflush(stdout);
  }

  // One row; `flops_per_step` and `tokens_per_step` of cpm's step, `model` (classifier or
  // decoder) and `arguments` of the PyTorch reference script.
  void row(const std::string& attention, int length, double cpm_tokens_per_second,
           double flops_per_step, double tokens_per_step, const std::string& model,
           const std::string& arguments) {
    const double gflops = cpm_tokens_per_second / tokens_per_step * flops_per_step * 1e-9;
    std::printf("%-14s %6d %11.0f %8.1f %5.1f%%", attention.c_str(), length, cpm_tokens_per_second,
                gflops, 100.0 * gflops * 1e9 / peak_);
    for (std::size_t b = 0; b < blas_.size(); ++b) {
      const TorchRate torch =
          run_torch(model, arguments + " --threads " + std::to_string(threads_), blas_[b]);
      if (ran_on_[b].empty()) ran_on_[b] = torch.ran_on;
      if (torch.tokens_per_second > 0)
        std::printf(" | %16.0f %6.2f", torch.tokens_per_second,
                    cpm_tokens_per_second / torch.tokens_per_second);
      else
        std::printf(" | %16s %6s", "-", "-");
      std::fflush(stdout);
    }
    std::printf("\n");
  }

  // What each PyTorch run used (its BLAS, the BLAS's kernels and threads, ATen's kernels).
  void print_anchors() const {
    for (std::size_t b = 0; b < blas_.size(); ++b)
      std::printf("torch+%s: %s (%s)\n", blas_[b].name.c_str(), ran_on_[b].c_str(),
                  blas_[b].environment.c_str());
  }

 private:
  int threads_;
  double peak_;
  std::vector<TorchBlas> blas_ = torch_blas_choices();
  std::vector<std::string> ran_on_ = std::vector<std::string>(blas_.size());
};

}  // namespace cpm::bench

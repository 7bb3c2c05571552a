// Forward + backward time of one training step against the sequence length L = 128 … 8,192
// (batch 1, d_model 64, 4 heads, 2 layers, m = 64) for linear (favor) and softmax attention, and
// the log–log slope between L = 256 and the largest L (linear attention should be ≈ 1, softmax ≈
// 2).
//   build/bin/attention_scaling_bench [--max-length 8192] [--max-softmax-length 8192]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/attention_bench_support.hpp"
#include "bench/instruction_set.hpp"

namespace {

// Least-squares slope of log t against log L.
double log_log_slope(const std::vector<double>& lengths, const std::vector<double>& times) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(lengths.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const double x = std::log(lengths[i]), y = std::log(times[i]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

}  // namespace

int main(int argc, char** argv) {
  cpm::print_instruction_set();
  int max_length = 8192, max_softmax = 8192;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--max-length") == 0) max_length = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--max-softmax-length") == 0) max_softmax = std::atoi(argv[i + 1]);
  }
  std::printf("%6s %14s %14s %8s\n", "L", "linear [ms]", "softmax [ms]", "ratio");
  std::vector<double> lin_l, lin_t, soft_l, soft_t;
  for (int L = 128; L <= max_length; L *= 2) {
    const int repeats = L <= 1024 ? 5 : 2;
    cpm::bench::TrainingStepBench linear(cpm::AttentionKind::linear, 1, L);
    const double t_linear = linear.seconds_per_step(1, repeats);
    double t_softmax = 0.0;
    if (L <= max_softmax) {
      cpm::bench::TrainingStepBench softmax(cpm::AttentionKind::softmax, 1, L);
      t_softmax = softmax.seconds_per_step(1, repeats);
    }
    std::printf("%6d %14.2f %14.2f %8.2f\n", L, 1e3 * t_linear, 1e3 * t_softmax,
                t_softmax > 0 ? t_softmax / t_linear : 0.0);
    std::fflush(stdout);
    if (L >= 256) {
      lin_l.push_back(L);
      lin_t.push_back(t_linear);
      if (t_softmax > 0) {
        soft_l.push_back(L);
        soft_t.push_back(t_softmax);
      }
    }
  }
  if (lin_l.size() >= 2)
    std::printf("log-log slope, L = 256 … %d: linear %.3f", max_length,
                log_log_slope(lin_l, lin_t));
  if (soft_l.size() >= 2) std::printf(", softmax %.3f", log_log_slope(soft_l, soft_t));
  std::printf("\n");
  return 0;
}

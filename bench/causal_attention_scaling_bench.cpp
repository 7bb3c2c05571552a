// Forward + backward time of causal (decoder) attention alone against the sequence length
// L = 256 … 8,192 (float, batch 1, 4 heads of d_head 16): chunked causal linear attention (favor,
// m = 64) and causal softmax attention, and the least-squares log–log slope of time against L
// (linear should be ≈ 1, at most 1.1; softmax ≈ 2). Each linear time is the fastest of 20 blocks
// of max-length / L steps, the same tokens at every length.
//   build/bin/causal_attention_scaling_bench [--max-length 8192] [--max-softmax-length 8192]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/instruction_set.hpp"
#include "core/random_stream.hpp"
#include "transformer/causal_linear_attention.hpp"
#include "transformer/softmax_attention.hpp"
#include "transformer/thread_index.hpp"

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

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  cpm::RandomStream s(seed, cpm::RandomPurpose::test_inputs, 0, 0);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(s.normal());
  return v;
}

// The buffers of one causal attention layer on random q, k, v and particles.
struct CausalAttentionBench {
  static constexpr int kHeads = 4, kHeadSize = 16, kFeatures = 64;
  cpm::AttentionLayout layout;
  cpm::FeatureMapSpec spec{cpm::FeatureMapKind::favor, 1e-6};
  bool linear;
  std::vector<int> lengths;
  std::vector<float> qkv, omega, out, dout, dqkv, lse, phi_q, phi_k, inv, scratch;
  std::vector<double> kv, z, scratch_double;

  CausalAttentionBench(bool linear_attention, int length)
      : layout{1, length, kHeads, kHeadSize, false}, linear(linear_attention), lengths{length} {
    const int m = kFeatures, bh = kHeads;
    const std::size_t N = length, threads = cpm::max_threads();
    qkv = random_floats(std::size_t(layout.qkv_rows()) * N, 1);
    omega = random_floats(std::size_t(kHeads) * m * kHeadSize, 2);
    dout = random_floats(std::size_t(layout.channels()) * N, 3);
    out.assign(dout.size(), 0.0f);
    dqkv.assign(qkv.size(), 0.0f);
    lse.assign(std::size_t(bh) * length, 0.0f);
    inv = lse;
    if (linear) {
      phi_q.assign(std::size_t(bh) * m * length, 0.0f);
      phi_k = phi_q;
      kv.assign(std::size_t(bh) * m * kHeadSize, 0.0);
      z.assign(std::size_t(bh) * m, 0.0);
      scratch.assign(threads * cpm::causal_linear_attention_scratch(m, length, kHeadSize), 0.0f);
      scratch_double.assign(threads * cpm::causal_linear_attention_scratch_double(m, kHeadSize),
                            0.0);
    } else {
      scratch.assign(threads * cpm::softmax_attention_scratch(kHeadSize, length), 0.0f);
    }
  }

  // One forward and backward pass; returns seconds.
  double step() {
    const auto start = std::chrono::steady_clock::now();
    std::fill(dqkv.begin(), dqkv.end(), 0.0f);
    if (linear) {
      const cpm::CausalLinearAttentionCache<float> cache{phi_q.data(), phi_k.data(), kv.data(),
                                                         z.data(), inv.data()};
      cpm::causal_linear_attention_forward(out.data(), cache, qkv.data(), omega.data(), layout,
                                           spec, kFeatures, scratch.data(), scratch_double.data());
      cpm::causal_linear_attention_backward(dqkv.data(), dout.data(), out.data(), cache, qkv.data(),
                                            omega.data(), layout, spec, kFeatures, scratch.data(),
                                            scratch_double.data());
    } else {
      cpm::softmax_attention_forward(out.data(), lse.data(), qkv.data(), lengths.data(), layout,
                                     scratch.data(), true);
      cpm::softmax_attention_backward(dqkv.data(), dout.data(), out.data(), lse.data(), qkv.data(),
                                      lengths.data(), layout, scratch.data(), true);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  // `warmup` untimed steps, then the fastest of `blocks` blocks of `block_steps` steps each, per
  // step (robust on a shared machine). Every length times blocks of the same number of tokens:
  // the fastest of many sub-millisecond steps would dodge the interruptions that a long step
  // cannot, and bias the slope upwards.
  double seconds_per_step(int warmup, int blocks, int block_steps) {
    for (int i = 0; i < warmup; ++i) step();
    double best = 0.0;
    for (int b = 0; b < blocks; ++b) {
      double block = 0.0;
      for (int i = 0; i < block_steps; ++i) block += step();
      best = b == 0 ? block : std::min(best, block);
    }
    return best / block_steps;
  }
};

}  // namespace

int main(int argc, char** argv) {
  cpm::print_instruction_set();
  int max_length = 8192, max_softmax = 8192;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--max-length") == 0) max_length = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--max-softmax-length") == 0) max_softmax = std::atoi(argv[i + 1]);
  }
  std::printf(
      "causal attention, forward + backward: float, batch 1, %d heads of d_head %d, favor "
      "m = %d, chunk %d, %d threads\n",
      CausalAttentionBench::kHeads, CausalAttentionBench::kHeadSize,
      CausalAttentionBench::kFeatures, cpm::kCausalChunk, cpm::max_threads());
  std::printf("%6s %14s %14s %8s\n", "L", "linear [ms]", "softmax [ms]", "ratio");
  std::vector<double> lin_l, lin_t, soft_l, soft_t;
  for (int L = 256; L <= max_length; L *= 2) {
    const int repeats = 20, block_steps = std::max(1, max_length / L);
    CausalAttentionBench linear(true, L);
    const double t_linear = linear.seconds_per_step(1, repeats, block_steps);
    lin_l.push_back(L);
    lin_t.push_back(t_linear);
    double t_softmax = 0.0;
    if (L <= max_softmax) {
      CausalAttentionBench softmax(false, L);
      t_softmax = softmax.seconds_per_step(1, L <= 1024 ? repeats : 2, 1);
      soft_l.push_back(L);
      soft_t.push_back(t_softmax);
    }
    std::printf("%6d %14.3f %14.3f %8.2f\n", L, 1e3 * t_linear, 1e3 * t_softmax,
                t_softmax > 0 ? t_softmax / t_linear : 0.0);
    std::fflush(stdout);
  }
  if (lin_l.size() >= 2)
    std::printf("log-log slope, L = 256 … %d: linear %.3f", max_length,
                log_log_slope(lin_l, lin_t));
  if (soft_l.size() >= 2) std::printf(", softmax %.3f", log_log_slope(soft_l, soft_t));
  std::printf("\n");
  return 0;
}

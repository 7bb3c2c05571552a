// One attention layer of the benchmark models (batch 32, 4 heads of d_head 16, float): favor
// attention with m = 64 or softmax attention, causal (the decoder's, the default) or with
// --bidirectional (the classifier's) not, at length L (128 unless --length). Forward and backward
// are timed apart, in alternating blocks on one thread and on OMP_NUM_THREADS threads so that both
// see the same machine. Prints the median milliseconds per layer of each and the speed-up of the
// team. --offset 16 places every buffer 16 bytes past a cache line, where glibc's malloc puts a
// large block (cpm's operator new aligns every block to a line, core/heap_alignment.hpp).
//   OMP_NUM_THREADS=2 build/bin/attention_layer_bench [--attention favor|softmax]
//       [--bidirectional] [--length 128] [--blocks 15] [--steps 20] [--offset 0]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/instruction_set.hpp"
#include "bench/median.hpp"
#include "core/random_stream.hpp"
#include "transformer/causal_linear_attention.hpp"
#include "transformer/linear_attention.hpp"
#include "transformer/softmax_attention.hpp"
#include "transformer/thread_index.hpp"

namespace {

// A buffer of n values starting `offset` bytes past a cache line.
template <class T>
class Buffer {
 public:
  Buffer(std::size_t n, std::size_t offset)
      : data_(n + offset / sizeof(T)), shift_(offset / sizeof(T)) {}
  T* data() { return data_.data() + shift_; }
  std::size_t size() const { return data_.size() - shift_; }

 private:
  std::vector<T> data_;  // on a cache line (core/heap_alignment.hpp)
  std::size_t shift_;
};

struct AttentionLayer {
  static constexpr int kBatch = 32, kHeads = 4, kHeadSize = 16, kFeatures = 64;
  static constexpr std::size_t kPairs = kBatch * kHeads, m = kFeatures;
  const bool softmax, causal;
  const int length;
  const std::size_t N;
  cpm::AttentionLayout layout;
  cpm::FeatureMapSpec spec{cpm::FeatureMapKind::favor, 1e-6};
  std::vector<int> lengths;
  Buffer<float> qkv, omega, out, dout, dqkv, inverse, phi_q, phi_k, scratch;
  Buffer<double> kv, z, scratch_double;

  AttentionLayer(bool softmax_, bool causal_, int length_, std::size_t offset)
      : softmax(softmax_),
        causal(causal_),
        length(length_),
        N(std::size_t(kBatch) * length),
        layout{kBatch, length, kHeads, kHeadSize, false},
        lengths(kBatch, length),
        qkv(std::size_t(layout.qkv_rows()) * N, offset),
        omega(kHeads * m * kHeadSize, offset),
        out(std::size_t(layout.channels()) * N, offset),
        dout(out.size(), offset),
        dqkv(qkv.size(), offset),
        inverse(kPairs * length, offset),  // softmax: the log-sum-exp
        phi_q(softmax ? 0 : kPairs * m * length, offset),
        phi_k(phi_q.size(), offset),
        scratch(cpm::max_threads() *
                    (softmax  ? cpm::softmax_attention_scratch(kHeadSize, length)
                     : causal ? cpm::causal_linear_attention_scratch(m, length, kHeadSize)
                              : cpm::linear_attention_scratch(m, length, kHeadSize)),
                offset),
        kv(kPairs * m * kHeadSize, offset),
        z(kPairs * m, offset),
        scratch_double(
            cpm::max_threads() * std::max(cpm::causal_linear_attention_scratch_double(m, kHeadSize),
                                          cpm::linear_attention_scratch_double(m, kHeadSize)),
            offset) {
    fill_random(qkv, 1, 0.3f);
    fill_random(omega, 2, 1.0f);
    fill_random(dout, 3, 1.0f);
  }

  static void fill_random(Buffer<float>& b, std::uint64_t seed, float scale) {
    cpm::RandomStream s(seed, cpm::RandomPurpose::test_inputs, 0, 0);
    for (std::size_t i = 0; i < b.size(); ++i) b.data()[i] = scale * static_cast<float>(s.normal());
  }

  void forward() {
    if (softmax) {
      cpm::softmax_attention_forward(out.data(), inverse.data(), qkv.data(), lengths.data(), layout,
                                     scratch.data(), causal);
      return;
    }
    if (!causal) {
      cpm::linear_attention_forward(out.data(), cache(), qkv.data(), omega.data(), lengths.data(),
                                    layout, spec, kFeatures, scratch.data(), scratch_double.data());
      return;
    }
    cpm::causal_linear_attention_forward(out.data(), cache(), qkv.data(), omega.data(), layout,
                                         spec, kFeatures, scratch.data(), scratch_double.data());
  }

  void backward() {
    if (softmax) {
      cpm::softmax_attention_backward(dqkv.data(), dout.data(), out.data(), inverse.data(),
                                      qkv.data(), lengths.data(), layout, scratch.data(), causal);
      return;
    }
    if (!causal) {
      cpm::linear_attention_backward(dqkv.data(), dout.data(), out.data(), cache(), qkv.data(),
                                     omega.data(), lengths.data(), layout, spec, kFeatures,
                                     scratch.data(), scratch_double.data());
      return;
    }
    cpm::causal_linear_attention_backward(dqkv.data(), dout.data(), out.data(), cache(), qkv.data(),
                                          omega.data(), layout, spec, kFeatures, scratch.data(),
                                          scratch_double.data());
  }

  cpm::CausalLinearAttentionCache<float> cache() {
    return {phi_q.data(), phi_k.data(), kv.data(), z.data(), inverse.data()};
  }

  // Seconds of `steps` forward passes and of as many backward passes.
  std::pair<double, double> time(int steps) {
    using clock = std::chrono::steady_clock;
    double forward_seconds = 0.0, backward_seconds = 0.0;
    for (int s = 0; s < steps; ++s) {
      const auto t0 = clock::now();
      forward();
      const auto t1 = clock::now();
      std::fill_n(dqkv.data(), dqkv.size(), 0.0f);  // the caller's zeroing, not timed
      const auto t2 = clock::now();
      backward();
      const auto t3 = clock::now();
      forward_seconds += std::chrono::duration<double>(t1 - t0).count();
      backward_seconds += std::chrono::duration<double>(t3 - t2).count();
    }
    return {forward_seconds, backward_seconds};
  }
};

}  // namespace

int main(int argc, char** argv) {
  int blocks = 15, steps = 20, offset = 0, length = 128;
  bool softmax = false, causal = true;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--bidirectional") == 0) {
      causal = false;
    } else if (has_value && std::strcmp(argv[i], "--attention") == 0 &&
               (std::strcmp(argv[i + 1], "favor") == 0 ||
                std::strcmp(argv[i + 1], "softmax") == 0)) {
      softmax = std::strcmp(argv[++i], "softmax") == 0;
    } else if (has_value && std::strcmp(argv[i], "--length") == 0) {
      length = std::atoi(argv[++i]);
    } else if (has_value && std::strcmp(argv[i], "--blocks") == 0) {
      blocks = std::atoi(argv[++i]);
    } else if (has_value && std::strcmp(argv[i], "--steps") == 0) {
      steps = std::atoi(argv[++i]);
    } else if (has_value && std::strcmp(argv[i], "--offset") == 0) {
      offset = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: attention_layer_bench [--attention favor|softmax] [--bidirectional] "
                   "[--length L] [--blocks B] [--steps S] [--offset bytes]\n");
      return 2;
    }
  }
  cpm::print_instruction_set();
  const int threads = omp_get_max_threads();
  if (blocks < 1 || steps < 1 || length < 1 || offset < 0 || offset % 8 != 0) {
    std::fprintf(stderr,
                 "attention_layer_bench: --blocks, --steps and --length must be positive, "
                 "--offset a multiple of 8 bytes\n");
    return 2;
  }
  AttentionLayer layer(softmax, causal, length, offset);
  layer.time(2);  // first touch of every buffer
  std::vector<double> f1, b1, fn, bn;
  for (int b = 0; b < blocks; ++b) {
    omp_set_num_threads(1);
    auto [f, bw] = layer.time(steps);
    f1.push_back(1e3 * f / steps);
    b1.push_back(1e3 * bw / steps);
    omp_set_num_threads(threads);
    std::tie(f, bw) = layer.time(steps);
    fn.push_back(1e3 * f / steps);
    bn.push_back(1e3 * bw / steps);
  }
  using cpm::bench::median;
  std::printf(
      "%s %s attention, batch %d, L %d, %d heads of d_head %d%s, float: ms per layer (median of "
      "%d blocks of %d steps), buffers %d bytes past a cache line\n",
      causal ? "causal" : "bidirectional", softmax ? "softmax" : "favor", AttentionLayer::kBatch,
      length, AttentionLayer::kHeads, AttentionLayer::kHeadSize, softmax ? "" : ", m 64", blocks,
      steps, offset);
  std::printf("%10s %10s %10s\n", "threads", "forward", "backward");
  std::printf("%10d %10.3f %10.3f\n", 1, median(f1), median(b1));
  std::printf("%10d %10.3f %10.3f\n", threads, median(fn), median(bn));
  std::printf("%10s %10.2f %10.2f\n", "speed-up", median(f1) / median(fn), median(b1) / median(bn));
  return 0;
}

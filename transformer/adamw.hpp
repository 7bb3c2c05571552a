#pragma once
// AdamW (Loshchilov & Hutter, decoupled weight decay) over the flat parameter vector, the
// learning-rate schedule (linear warm-up, then cosine decay) and clipping by the global norm.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <vector>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop
#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "transformer/interleaved_sum.hpp"

namespace cpm {

struct AdamWSettings {
  double learning_rate = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 0.01;
};

// lr(t) = lr₀ t/warm-up for t < warm-up, then lr_min + (lr₀ − lr_min)(1 + cos(π s))/2 with
// s = (t − warm-up)/(total − warm-up) ∈ [0, 1]; t counts from 1.
inline double scheduled_learning_rate(double base, std::int64_t step, std::int64_t warmup,
                                      std::int64_t total, double min_ratio = 0.0) {
  if (step <= warmup && warmup > 0) return base * static_cast<double>(step) / warmup;
  const double span = static_cast<double>(std::max<std::int64_t>(total - warmup, 1));
  const double s = std::min(1.0, static_cast<double>(step - warmup) / span);
  const double low = base * min_ratio;
  return low + (base - low) * 0.5 * (1.0 + std::cos(3.141592653589793 * s));
}

// ‖g‖₂, summed in an order that depends on the length alone.
template <class T>
double gradient_norm(const std::vector<T>& g) {
  return std::sqrt(
      chunked_sum(g.data(), static_cast<std::ptrdiff_t>(g.size()), [](double x) { return x * x; }));
}

// The factor that brings a gradient of norm `norm` to ‖g‖₂ ≤ max_norm: max_norm / norm above it, 1
// within it or for max_norm ≤ 0 (no clipping). AdamW::step applies it as it reads the gradient.
inline double clip_scale(double norm, double max_norm) {
  return max_norm > 0.0 && norm > max_norm ? max_norm / norm : 1.0;
}

namespace adamw_detail {

// The constants of one step, in the parameters' precision T.
template <class T>
struct StepConstants {
  T beta1, beta2, rate, inverse_c1, inverse_c2, epsilon, decay, gradient_scale;
};

// GCC's AVX-512 widening intrinsics start from an undefined register, which -Wuninitialized
// reports where they are inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
// The decay flags (0 or 1) of the lanes at `flags` as V's values: `decay` where a flag is 1,
// else 0.
template <class V, class T>
V decay_lanes(const unsigned char* flags, T decay) {
  if constexpr (std::is_same_v<V, T>) {
    return *flags ? decay : T(0);
  } else {
    static_assert(std::is_same_v<T, float>, "registers of floats only");
#if defined(__AVX512F__)
    if constexpr (V::size == 16)  // 16 bytes widened to 32-bit integers, then to floats
      return V(_mm512_cvtepi32_ps(
                 _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(flags))))) *
             V(decay);
#endif
#if defined(__AVX2__)
    if constexpr (V::size == 8)
      return V(_mm256_cvtepi32_ps(
                 _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(flags))))) *
             V(decay);
#endif
    alignas(sizeof(V)) T lanes[V::size];
    for (std::size_t l = 0; l < V::size; ++l) lanes[l] = flags[l] ? decay : T(0);
    return V::load_aligned(lanes);
  }
}
#pragma GCC diagnostic pop

// One update of n parameters, lanes V (T, or a register of floats) at a time; n a multiple of
// the lanes. Out of line, so that a full block and the padded last one run the same instructions
// and an element's value does not depend on where the threads' ranges end. The moments m, v are
// floats; with T = double a scalar lane widens them and rounds them back.
//   g ← s g,  m ← β₁ m + (1 − β₁) g,  v ← β₂ v + (1 − β₂) g²,  m̂ = m/(1 − β₁ᵗ),  v̂ = v/(1 − β₂ᵗ)
//   θ ← θ − lr (m̂ / (√v̂ + ε) + λ θ [decay])
template <class V, class T>
[[gnu::noinline]] void update(T* parameters, const T* gradients, float* m, float* v,
                              const unsigned char* decay, std::ptrdiff_t n,
                              const StepConstants<T>& c) {
  constexpr std::ptrdiff_t lanes = sizeof(V) / sizeof(T);
  const auto load = [](const auto* x) {
    if constexpr (std::is_same_v<V, T>)
      return static_cast<T>(*x);
    else
      return V::load_unaligned(x);
  };
  const auto store = [](const V& value, auto* x) {
    if constexpr (std::is_same_v<V, T>)
      *x = static_cast<std::remove_pointer_t<decltype(x)>>(value);
    else
      value.store_unaligned(x);
  };
  for (std::ptrdiff_t i = 0; i < n; i += lanes) {
    const V g = load(gradients + i) * V(c.gradient_scale);
    const V new_m = V(c.beta1) * load(m + i) + V(T(1) - c.beta1) * g;
    const V new_v = V(c.beta2) * load(v + i) + V(T(1) - c.beta2) * g * g;
    const V theta = load(parameters + i);
    using std::sqrt;
    using xsimd::sqrt;
    const V step = (new_m * V(c.inverse_c1)) / (sqrt(new_v * V(c.inverse_c2)) + V(c.epsilon)) +
                   decay_lanes<V>(decay + i, c.decay) * theta;
    store(V(theta - V(c.rate) * step), parameters + i);
    store(new_m, m + i);
    store(new_v, v + i);
  }
}

}  // namespace adamw_detail

template <class T>
class AdamW {
 public:
  // decay[i] says whether parameter i takes weight decay (matrices yes; biases, LayerNorm no).
  AdamW(std::vector<unsigned char> decay, AdamWSettings settings)
      : decay_(std::move(decay)),
        settings_(settings),
        m_(decay_.size(), 0.0f),
        v_(decay_.size(), 0.0f) {
    for (unsigned char& flag : decay_) flag = flag != 0;  // 0 or 1, as decay_lanes reads them
  }

  // One update (adamw_detail::update) with learning rate lr on the gradients times gradient_scale
  // (clip_scale's factor). In T, as PyTorch's AdamW in the parameters' precision; float a vector
  // register at a time, in fixed blocks (the last one padded), so that the result does not depend
  // on the threads.
  void step(std::vector<T>& parameters, const std::vector<T>& gradients, double lr,
            double gradient_scale = 1.0) {
    ++t_;
    const double b1 = settings_.beta1, b2 = settings_.beta2;
    const adamw_detail::StepConstants<T> c{
        static_cast<T>(b1),
        static_cast<T>(b2),
        static_cast<T>(lr),
        static_cast<T>(1.0 / (1.0 - std::pow(b1, static_cast<double>(t_)))),
        static_cast<T>(1.0 / (1.0 - std::pow(b2, static_cast<double>(t_)))),
        static_cast<T>(settings_.epsilon),
        static_cast<T>(settings_.weight_decay),
        static_cast<T>(gradient_scale)};
    using Lanes = std::conditional_t<std::is_same_v<T, float>, xsimd::batch<float>, T>;
    constexpr std::ptrdiff_t lanes = sizeof(Lanes) / sizeof(T), block = 64 * lanes;
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(parameters.size());
    const std::ptrdiff_t full = n / lanes * lanes, blocks = (full + block - 1) / block;
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t k = 0; k < blocks; ++k) {
      const std::ptrdiff_t i = k * block;
      adamw_detail::update<Lanes>(parameters.data() + i, gradients.data() + i, m_.data() + i,
                                  v_.data() + i, decay_.data() + i, std::min(block, full - i), c);
    }
    if (full < n) {  // the last n mod lanes parameters, padded to a register
      T theta[lanes] = {}, g[lanes] = {};
      float m[lanes] = {}, v[lanes] = {};
      unsigned char decay[lanes] = {};
      const std::ptrdiff_t rest = n - full;
      std::copy_n(parameters.data() + full, rest, theta);
      std::copy_n(gradients.data() + full, rest, g);
      std::copy_n(m_.data() + full, rest, m);
      std::copy_n(v_.data() + full, rest, v);
      std::copy_n(decay_.data() + full, rest, decay);
      adamw_detail::update<Lanes>(theta, g, m, v, decay, lanes, c);
      std::copy_n(theta, rest, parameters.data() + full);
      std::copy_n(m, rest, m_.data() + full);
      std::copy_n(v, rest, v_.data() + full);
    }
  }
  std::int64_t steps() const {
    return t_;
  }
  // The state a checkpoint keeps: m, v and the step count t of the bias corrections.
  const std::vector<float>& first_moments() const {
    return m_;
  }
  const std::vector<float>& second_moments() const {
    return v_;
  }
  // Continues from a saved state; std::invalid_argument if its size is not this optimiser's.
  void restore(const std::vector<float>& m, const std::vector<float>& v, std::int64_t t) {
    if (m.size() != m_.size() || v.size() != v_.size() || t < 0)
      throw std::invalid_argument("the optimiser state does not match the model's parameters");
    m_ = m;
    v_ = v;
    t_ = t;
  }

 private:
  std::vector<unsigned char> decay_;
  AdamWSettings settings_;
  std::vector<float> m_, v_;
  std::int64_t t_ = 0;
};

}  // namespace cpm

#pragma once
// AdamW (Loshchilov & Hutter, decoupled weight decay) over the flat parameter vector, the
// learning-rate schedule (linear warm-up, then cosine decay) and clipping by the global norm.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "transformer/elementwise.hpp"
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

// Scales g so that ‖g‖₂ ≤ max_norm (no-op for max_norm ≤ 0); returns the norm before clipping.
template <class T>
double clip_gradient_norm(std::vector<T>& g, double max_norm) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(g.size());
  const double norm = std::sqrt(chunked_sum(g.data(), n, [](double x) { return x * x; }));
  if (max_norm > 0.0 && norm > max_norm)
    parallel_scale(g.data(), static_cast<T>(max_norm / norm), n);
  return norm;
}

template <class T>
class AdamW {
 public:
  // decay[i] says whether parameter i takes weight decay (matrices yes; biases, LayerNorm no).
  AdamW(std::vector<unsigned char> decay, AdamWSettings settings)
      : decay_(std::move(decay)),
        settings_(settings),
        m_(decay_.size(), 0.0f),
        v_(decay_.size(), 0.0f) {}

  // One update with learning rate lr:
  //   m ← β₁ m + (1 − β₁) g,  v ← β₂ v + (1 − β₂) g²,  m̂ = m/(1 − β₁ᵗ),  v̂ = v/(1 − β₂ᵗ)
  //   θ ← θ − lr (m̂ / (√v̂ + ε) + λ θ [decay])
  void step(std::vector<T>& parameters, const std::vector<T>& gradients, double lr) {
    ++t_;
    const double b1 = settings_.beta1, b2 = settings_.beta2;
    const double c1 = 1.0 - std::pow(b1, static_cast<double>(t_));
    const double c2 = 1.0 - std::pow(b2, static_cast<double>(t_));
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(parameters.size());
    // In T, as PyTorch's AdamW in the parameters' precision (float: twice the lanes of double).
    const T beta1 = static_cast<T>(b1), beta2 = static_cast<T>(b2), rate = static_cast<T>(lr);
    const T inverse_c1 = static_cast<T>(1.0 / c1), inverse_c2 = static_cast<T>(1.0 / c2);
    const T epsilon = static_cast<T>(settings_.epsilon),
            decay = static_cast<T>(settings_.weight_decay);
#pragma omp parallel for simd schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      const T g = gradients[i];
      const T m = beta1 * static_cast<T>(m_[i]) + (T(1) - beta1) * g;
      const T v = beta2 * static_cast<T>(v_[i]) + (T(1) - beta2) * g * g;
      m_[i] = static_cast<float>(m);
      v_[i] = static_cast<float>(v);
      const T update = (m * inverse_c1) / (std::sqrt(v * inverse_c2) + epsilon) +
                       (decay_[i] ? decay * parameters[i] : T(0));
      parameters[i] -= rate * update;
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

#pragma once
// Key-side normalisation of linear attention's features (docs/model.md §2, "Keys of one length"):
//   φ̃(k) = φ(k) / n(k),   n = ‖φ(k)‖₂ (l2) or ‖φ(k)‖₁ = Σ_a |φ_a(k)| (l1, as DPFP's logs),
// so that no key outweighs the others by the length of its features; the query side needs none,
// since the read-out's normalisation cancels the scale of φ(q). The backward pass of one column,
//   l2:  dφ = (dφ̃ − φ̃ (φ̃ᵀdφ̃)) / n,      l1:  dφ = (dφ̃ − sign(φ) (φ̃ᵀdφ̃)) / n,
// turns the gradient with respect to φ̃ into the one with respect to φ, which the map's own
// backward then takes (with φ = n φ̃).
//
// QK normalisation (Henry et al. 2020, "Query-Key Normalization for Transformers") acts before φ
// instead, on the queries and keys themselves, with one learned scale s per head:
//   y = s x/‖x‖₂,   dx = (s/‖x‖)(dy − x̂ (x̂ᵀdy)),   ds = x̂ᵀdy,   x̂ = x/‖x‖,
// so that φ reads vectors of one length s, which training adapts; the models that use it
// (transformer/retrieval_model.hpp, transformer/transformer_block.hpp) hold s.
#include <cmath>
#include <stdexcept>
#include <string>

namespace cpm {

enum class KeyNormalisation { none, l2, l1 };

inline const char* key_normalisation_name(KeyNormalisation k) {
  return k == KeyNormalisation::l2 ? "l2" : k == KeyNormalisation::l1 ? "l1" : "none";
}

// "l2", "l1" or "none"; std::invalid_argument naming the accepted values otherwise.
inline KeyNormalisation key_normalisation(const std::string& name) {
  if (name == "l2") return KeyNormalisation::l2;
  if (name == "l1") return KeyNormalisation::l1;
  if (name == "none") return KeyNormalisation::none;
  throw std::invalid_argument("unknown key normalisation '" + name + "' (l2, l1 or none)");
}

// φ (m, columns), column-major, normalised column by column in place; norms[j] receives n_j.
template <class T>
void normalise_key_columns(KeyNormalisation kind, T* phi, int m, int columns, T* norms) {
  for (int j = 0; j < columns; ++j) {
    T* f = phi + static_cast<std::ptrdiff_t>(j) * m;
    double n = 0.0;
    for (int a = 0; a < m; ++a)
      n += kind == KeyNormalisation::l2 ? double(f[a]) * f[a] : std::abs(double(f[a]));
    if (kind == KeyNormalisation::l2) n = std::sqrt(n);
    const T inverse = static_cast<T>(n > 0.0 ? 1.0 / n : 0.0);
    for (int a = 0; a < m; ++a) f[a] *= inverse;
    norms[j] = static_cast<T>(n);
  }
}

// dphi (m, columns) from ∂/∂φ̃ to ∂/∂φ in place, and phi = n φ̃ from the normalised columns.
template <class T>
void key_normalisation_backward(KeyNormalisation kind, T* dphi, const T* normalised, const T* norms,
                                int m, int columns, T* phi) {
  for (int j = 0; j < columns; ++j) {
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(j) * m;
    const T* f = normalised + at;
    T* g = dphi + at;
    double inner = 0.0;  // φ̃ᵀdφ̃
    for (int a = 0; a < m; ++a) inner += double(f[a]) * g[a];
    const T n = norms[j], inverse = static_cast<T>(n > T(0) ? 1.0 / n : 0.0);
    for (int a = 0; a < m; ++a) {
      const T direction = kind == KeyNormalisation::l2 ? f[a]
                          : f[a] > T(0)                ? T(1)
                          : f[a] < T(0)                ? T(-1)
                                                       : T(0);
      g[a] = (g[a] - direction * static_cast<T>(inner)) * inverse;
      phi[at + a] = f[a] * n;
    }
  }
}

// y (d) = s x/‖x‖ for x (d); returns ‖x‖ (y = 0 for x = 0).
template <class T>
T qk_normalise(const T* x, T* y, int d, T s) {
  double n = 0.0;
  for (int a = 0; a < d; ++a) n += double(x[a]) * x[a];
  n = std::sqrt(n);
  const T factor = static_cast<T>(n > 0.0 ? s / n : 0.0);
  for (int a = 0; a < d; ++a) y[a] = factor * x[a];
  return static_cast<T>(n);
}

// dx (d) from dy (d), the gradient with respect to y = s x/‖x‖ (dx may be dy: in place), given
// x and norm = ‖x‖; returns x̂ᵀdy, the example's ∂ℓ/∂s.
template <class T>
T qk_normalise_backward(const T* x, T norm, T s, const T* dy, T* dx, int d) {
  if (!(norm > T(0))) {
    for (int a = 0; a < d; ++a) dx[a] = T(0);
    return T(0);
  }
  const double inverse = 1.0 / norm;
  double inner = 0.0;  // x̂ᵀdy
  for (int a = 0; a < d; ++a) inner += double(x[a]) * inverse * dy[a];
  for (int a = 0; a < d; ++a)
    dx[a] = static_cast<T>(s * inverse * (dy[a] - x[a] * inverse * inner));
  return static_cast<T>(inner);
}

}  // namespace cpm

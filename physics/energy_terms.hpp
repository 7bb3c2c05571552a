#pragma once
// The energy per particle in mean-field scaling (docs/model.md §1):
//   E_N = (1/N) Σ_k V(ω_k) + (λ / (2N²)) Σ_{k≠l} W(ω_k − ω_l).
namespace cpm {

struct EnergyTerms {
  double external = 0.0;     // (1/N) Σ_k V(ω_k)
  double interaction = 0.0;  // (λ / (2N²)) Σ_{k≠l} W(ω_k − ω_l)
  double total() const { return external + interaction; }
};

}  // namespace cpm

#pragma once
// The drift of Algorithm 1 (docs/model.md §1),
//     F_k = ∇V(ω_k) + (λ/N) Σ_{l≠k} ∇W(ω_k − ω_l) = N ∇_{ω_k} E_N,
// and the energy terms of E_N. Combines an external potential with an interaction sum.
#include <Eigen/Dense>
#include <memory>

#include "physics/energy_terms.hpp"
#include "physics/external_potential.hpp"
#include "solvers/interaction_sum.hpp"

namespace cpm {

class ForceField {
 public:
  ForceField(std::shared_ptr<const ExternalPotential> potential,
             std::unique_ptr<InteractionSum> interaction, double lambda);

  // drift (N, d) receives F; if energy is non-null it receives the terms of E_N.
  void compute(const Eigen::MatrixXd& x, Eigen::MatrixXd& drift, EnergyTerms* energy);
  EnergyTerms energy(const Eigen::MatrixXd& x);
  // After the particles moved: rows to the ranks that own them (InteractionSum::redistribute).
  void redistribute(Particles& particles) { interaction_->redistribute(particles); }

  const ExternalPotential& potential() const { return *potential_; }
  const InteractionSum& interaction() const { return *interaction_; }
  double lambda() const { return lambda_; }

 private:
  std::shared_ptr<const ExternalPotential> potential_;
  std::unique_ptr<InteractionSum> interaction_;
  double lambda_;
  Eigen::VectorXd potential_values_;  // work buffers, sized on first use
  Eigen::MatrixXd pair_gradient_, scratch_;
};

}  // namespace cpm

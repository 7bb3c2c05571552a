#include "solvers/force_field.hpp"

namespace cpm {

ForceField::ForceField(std::shared_ptr<const ExternalPotential> potential,
                       std::unique_ptr<InteractionSum> interaction, double lambda)
    : potential_(std::move(potential)), interaction_(std::move(interaction)), lambda_(lambda) {}

void ForceField::compute(const Eigen::MatrixXd& x, Eigen::MatrixXd& drift, EnergyTerms* energy) {
  const double n = interaction_->system_size(x.rows());  // N of the whole system
  if (drift.rows() != x.rows() || drift.cols() != x.cols()) drift.resize(x.rows(), x.cols());
  if (pair_gradient_.rows() != x.rows() || pair_gradient_.cols() != x.cols())
    pair_gradient_.resize(x.rows(), x.cols());
  potential_->evaluate(x, potential_values_, &drift);
  double pair_energy = 0.0;
  if (lambda_ != 0.0) {
    interaction_->compute(x, pair_gradient_, energy ? &pair_energy : nullptr);
    drift += (lambda_ / n) * pair_gradient_;
  }
  if (energy) {
    energy->external = interaction_->total(potential_values_.sum()) / n;
    energy->interaction = lambda_ * pair_energy / (2.0 * n * n);
  }
}

EnergyTerms ForceField::energy(const Eigen::MatrixXd& x) {
  EnergyTerms e;
  if (scratch_.rows() != x.rows() || scratch_.cols() != x.cols())
    scratch_.resize(x.rows(), x.cols());
  compute(x, scratch_, &e);
  return e;
}

}  // namespace cpm

#include "experiments/frequencies/kernel_approximation.hpp"

#include <algorithm>
#include <cmath>

#include "frequencies/riesz_potential_of_gaussian.hpp"

namespace cpm {

KernelApproximationErrors kernel_errors(const Eigen::MatrixXd& x, const Eigen::MatrixXd& omega,
                                        double sigma, SpectralLaw law) {
  const Eigen::Index n = x.rows();
  const Eigen::MatrixXd phase = x * omega.transpose();  // (n, N)
  const Eigen::MatrixXd c = phase.array().cos(), s = phase.array().sin();
  Eigen::MatrixXd difference =
      (c * c.transpose() + s * s.transpose()) / static_cast<double>(omega.rows());
  // |x_i − x_j|² directly: through |x_i|² + |x_j|² − 2 x_iᵀx_j it cancels to ~1e-17 instead of 0
  // on the diagonal, and the Laplace kernel's square root turns that into errors of 1e-8.
  Eigen::MatrixXd exact(n, n);
#pragma omp parallel for schedule(static) if (n > 256)
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i)
      exact(i, j) = spectral_kernel(law, sigma, (x.row(i) - x.row(j)).squaredNorm());
  difference -= exact;
  KernelApproximationErrors e;
  e.frobenius = difference.norm() / exact.norm();
  e.max_entry = difference.cwiseAbs().maxCoeff();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> of_difference(difference,
                                                                     Eigen::EigenvaluesOnly);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> of_exact(exact, Eigen::EigenvaluesOnly);
  e.spectral = of_difference.eigenvalues().cwiseAbs().maxCoeff() /
               of_exact.eigenvalues().cwiseAbs().maxCoeff();
  return e;
}

double energy_distance_to_gaussian(const Eigen::MatrixXd& omega, double sigma) {
  const Eigen::Index n = omega.rows();
  const int d = static_cast<int>(omega.cols());
  // U = E W(ω − Z) for W = −|z|, so E|ω − Z| = −U(ω), E|Z − Z'| = −self energy.
  const RieszPotentialOfGaussian u(InteractionKernel::linear(), d, sigma);
  // Per-row terms, summed in row order afterwards: the result does not depend on the threads.
  Eigen::VectorXd to_p(n), within(n);
#pragma omp parallel for schedule(dynamic, 16)
  for (Eigen::Index i = 0; i < n; ++i) {
    to_p[i] = -u.value_r2(omega.row(i).squaredNorm());
    double row = 0.0;
    for (Eigen::Index j = i + 1; j < n; ++j) row += 2.0 * (omega.row(i) - omega.row(j)).norm();
    within[i] = row;
  }
  const double n2 = static_cast<double>(n) * static_cast<double>(n);
  const double squared =
      2.0 * to_p.sum() / static_cast<double>(n) - within.sum() / n2 + u.self_energy();
  return std::sqrt(std::max(squared, 0.0));
}

}  // namespace cpm

#include "experiments/frequencies/kernel_approximation.hpp"

#include <gtest/gtest.h>

#include <boost/math/special_functions/gamma.hpp>
#include <cmath>

#include "frequencies/feature_generator.hpp"

namespace cpm {
namespace {

Eigen::MatrixXd points(Eigen::Index n, int d) {
  FeatureRequest r;  // i.i.d. N(0, 0.3² I) rows, from another seed than the features
  r.n = n;
  r.dim = d;
  r.sigma = 0.3;
  r.seed = 99;
  return generate_features(r);
}

// With every frequency at 0 the feature kernel is 1 everywhere: the errors of the all-ones matrix.
TEST(KernelApproximation, ErrorsOfZeroFrequenciesAreThoseOfTheAllOnesMatrix) {
  const int d = 3;
  const Eigen::MatrixXd x = points(40, d);
  const double sigma = 1.4;
  Eigen::MatrixXd k(40, 40);
  for (int i = 0; i < 40; ++i)
    for (int j = 0; j < 40; ++j)
      k(i, j) = std::exp(-0.5 * sigma * sigma * (x.row(i) - x.row(j)).squaredNorm());
  const Eigen::MatrixXd difference = Eigen::MatrixXd::Ones(40, 40) - k;
  const KernelApproximationErrors e = kernel_errors(x, Eigen::MatrixXd::Zero(7, d), sigma);
  EXPECT_NEAR(e.frobenius, difference.norm() / k.norm(), 1e-12);
  EXPECT_NEAR(e.max_entry, difference.maxCoeff(), 1e-12);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> a(difference), b(k);
  EXPECT_NEAR(e.spectral,
              a.eigenvalues().cwiseAbs().maxCoeff() / b.eigenvalues().cwiseAbs().maxCoeff(), 1e-12);
}

// I.i.d. frequencies give an unbiased kernel with variance ∝ 1/N: the Frobenius error falls by
// about 8 from N = 64 to 4096 (the mean over seeds; within 25%).
TEST(KernelApproximation, IidErrorFallsLikeTheSquareRootOfN) {
  const Eigen::MatrixXd x = points(60, 4);
  auto mean_error = [&](Eigen::Index n) {
    double sum = 0.0;
    for (std::uint64_t replica = 0; replica < 8; ++replica) {
      FeatureRequest r;
      r.n = n;
      r.dim = 4;
      r.sigma = 1.0;
      r.replica = replica;
      sum += kernel_errors(x, generate_features(r), 1.0).frobenius / 8.0;
    }
    return sum;
  };
  EXPECT_NEAR(mean_error(64) / mean_error(4096), 8.0, 2.0);
}

// For N i.i.d. draws from p the squared energy distance has mean E|Z − Z'|/N.
TEST(KernelApproximation, EnergyDistanceOfIidDrawsHasItsKnownMean) {
  const int d = 2, n = 50, replicas = 400;
  const double sigma = 0.8;
  double mean_square = 0.0;
  for (int replica = 0; replica < replicas; ++replica) {
    FeatureRequest r;
    r.n = n;
    r.dim = d;
    r.sigma = sigma;
    r.replica = static_cast<std::uint64_t>(replica);
    const double e = energy_distance_to_gaussian(generate_features(r), sigma);
    mean_square += e * e / replicas;
  }
  const double mean_distance = 2.0 * sigma * boost::math::tgamma_ratio(0.5 * (d + 1), 0.5 * d);
  EXPECT_NEAR(mean_square / (mean_distance / n), 1.0, 0.1);
}

// The Laplace kernel exp(−σ|Δ|) is the cos average over its Cauchy law: zero frequencies give
// the errors of the all-ones matrix against it, and 16,384 i.i.d. Cauchy frequencies reproduce it
// to the Monte Carlo error (E f² = Σ Var cos/(N‖K‖²_F) ≤ n²/(N‖K‖²_F)), far below the error of
// Gaussian frequencies of the same scale.
TEST(KernelApproximation, LaplaceKernelIsTheCosineAverageOverTheCauchyLaw) {
  const Eigen::MatrixXd x = points(30, 2);
  const double sigma = 2.0;
  Eigen::MatrixXd k(30, 30);
  for (int i = 0; i < 30; ++i)
    for (int j = 0; j < 30; ++j) k(i, j) = std::exp(-sigma * (x.row(i) - x.row(j)).norm());
  const Eigen::MatrixXd difference = Eigen::MatrixXd::Ones(30, 30) - k;
  EXPECT_NEAR(kernel_errors(x, Eigen::MatrixXd::Zero(5, 2), sigma, SpectralLaw::laplace).frobenius,
              difference.norm() / k.norm(), 1e-12);
  FeatureRequest r;
  r.law = SpectralLaw::laplace;
  r.n = 16384;
  r.dim = 2;
  r.sigma = sigma;
  const double laplace =
      kernel_errors(x, generate_features(r), sigma, SpectralLaw::laplace).frobenius;
  EXPECT_LT(laplace, 4.0 * 30.0 / (std::sqrt(16384.0) * k.norm()));
  r.law = SpectralLaw::gaussian;
  EXPECT_GT(kernel_errors(x, generate_features(r), sigma, SpectralLaw::laplace).frobenius,
            5.0 * laplace);
}

}  // namespace
}  // namespace cpm

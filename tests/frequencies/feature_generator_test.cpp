#include "frequencies/feature_generator.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <boost/math/distributions/fisher_f.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "core/domain.hpp"
#include "frequencies/compensated_confinement.hpp"
#include "frequencies/riesz_potential_of_gaussian.hpp"
#include "frequencies/tabulated_riesz_potential.hpp"
#include "solvers/blocked_pair_sum.hpp"
#include "solvers/drift_jacobian.hpp"
#include "solvers/energy_minimizer.hpp"
#include "solvers/force_field.hpp"
#include "solvers/pair_hessian.hpp"

namespace cpm {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Kolmogorov–Smirnov distance of the norms of the rows of w to the law of |Z|, Z ~ N(0, σ² I_d).
double radial_ks_distance(const Eigen::MatrixXd& w, double sigma) {
  std::vector<double> r(static_cast<std::size_t>(w.rows()));
  for (Eigen::Index k = 0; k < w.rows(); ++k) r[static_cast<std::size_t>(k)] = w.row(k).norm();
  std::sort(r.begin(), r.end());
  const double n = static_cast<double>(r.size()), half_d = 0.5 * static_cast<double>(w.cols());
  double distance = 0.0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    const double cdf = boost::math::gamma_p(half_d, 0.5 * r[i] * r[i] / (sigma * sigma));
    distance = std::max({distance, std::abs(cdf - i / n), std::abs(cdf - (i + 1) / n)});
  }
  return distance;
}

TEST(CompensatedConfinement, GradientIsTheFiniteDifferenceOfTheValue) {
  for (double beta : {kInf, 3.0})
    for (const InteractionKernel& k :
         {InteractionKernel::power(-0.5), InteractionKernel::power(1.0), InteractionKernel::log()})
      for (SpectralLaw law : {SpectralLaw::gaussian, SpectralLaw::laplace}) {
        std::shared_ptr<const RadialConvolution> u;
        if (law == SpectralLaw::laplace)  // the table: the exact log kernel costs ~1 s per value
          u = shared_riesz_table(k, 3, 0.8, SpectralLaw::laplace);
        else
          u = std::make_shared<const RieszPotentialOfGaussian>(k, 3, 0.8);
        const CompensatedConfinement v(u, 1.7, beta, law);
        const Eigen::Vector3d x(0.4, -1.1, 0.7);
        const Eigen::VectorXd g = potential_gradient(v, x);
        for (int a = 0; a < 3; ++a) {
          Eigen::Vector3d plus = x, minus = x;
          plus[a] += 1e-6;
          minus[a] -= 1e-6;
          EXPECT_NEAR(g[a], (potential_value(v, plus) - potential_value(v, minus)) / 2e-6, 1e-8)
              << k.describe() << " beta=" << beta << " " << spectral_law_name(law);
        }
      }
}

// In 1D with W = −|z| at β = ∞ the energy's gradient in the particle of rank k is
// (λ/N)(2Φ(x_k/σ) − 1) − (λ/N²)(2k − 1 − N): the minimiser is the midpoint quantiles
// x_k = σ Φ⁻¹((2k − 1)/(2N)) of p, exactly.
TEST(FeatureGenerator, OneDimensionalEnergyDistanceGasSitsOnTheMidpointQuantiles) {
  FeatureRequest r;
  r.method = FeatureMethod::coulomb;
  r.n = 60;
  r.dim = 1;
  r.sigma = 1.5;
  r.repulsion.tolerance = 1e-10;
  r.repulsion.max_iterations = 5000;
  FeatureDiagnostics done;
  Eigen::MatrixXd w = generate_features(r, &done);
  EXPECT_TRUE(done.converged);
  std::sort(w.data(), w.data() + w.size());
  for (Eigen::Index k = 1; k <= r.n; ++k) {
    const double u = (2.0 * k - 1.0) / (2.0 * r.n);
    const double quantile = -r.sigma * std::sqrt(2.0) * boost::math::erfc_inv(2.0 * u);
    EXPECT_NEAR(w(k - 1, 0), quantile, 1e-7) << k;
  }
}

// The Coulomb gas in 3D (s = 1) at β = ∞ with the compensated confinement has the radial law of p
// (the KS distance of |ω| below its 1% critical value for N i.i.d. draws, 1.63/√N; at β = ∞ the
// particles settle in shells, so not far below), while the same gas in the plain confinement
// |ω|²/(2σ²), rescaled to the same mean |ω|², is a uniform ball, far from p.
TEST(FeatureGenerator, CoulombGasIn3dHasTheRadialLawOfTheGaussian) {
  FeatureRequest r;
  r.method = FeatureMethod::coulomb;
  r.n = 400;
  r.dim = 3;
  r.sigma = 0.7;
  r.repulsion.kernel = InteractionKernel::power(1.0);
  r.repulsion.tolerance = 1e-6;
  r.repulsion.max_iterations = 5000;
  FeatureDiagnostics done;
  const Eigen::MatrixXd w = generate_features(r, &done);
  EXPECT_TRUE(done.converged);
  const double critical = 1.63 / std::sqrt(static_cast<double>(r.n));
  const double ks = radial_ks_distance(w, r.sigma);
  EXPECT_LT(ks, critical);

  ForceField plain(std::make_shared<QuadraticPotential>(1.0 / (r.sigma * r.sigma)),
                   make_blocked_pair_sum(r.repulsion.kernel), 1.0);
  DriftJacobian jacobian(plain, Domain::whole_space(3), make_pair_hessian(r.repulsion.kernel));
  MinimizerParameters parameters;
  parameters.method = MinimizerMethod::lbfgs;
  parameters.tolerance = 1e-6;
  Eigen::MatrixXd ball = w;
  ASSERT_TRUE(EnergyMinimizer(plain, &jacobian, Domain::whole_space(3), parameters)
                  .minimize(ball)
                  .converged);
  ball *= std::sqrt(3.0 * r.n * r.sigma * r.sigma / ball.squaredNorm());
  const double uncompensated = radial_ks_distance(ball, r.sigma);
  EXPECT_GT(uncompensated, 3.0 * critical);
  std::printf("radial KS distance, N = 400, d = 3: compensated %.4f, plain confinement %.4f\n", ks,
              uncompensated);
}

// At finite β the gas's law is p too (the entropic anchor β⁻¹|ω|²/(2σ²) and the compensation):
// the empirical second moment of the particles is σ² d within the noise of one configuration.
TEST(FeatureGenerator, FiniteTemperatureGasKeepsTheVarianceOfTheGaussian) {
  FeatureRequest r;
  r.method = FeatureMethod::coulomb;
  r.n = 400;
  r.dim = 2;
  r.sigma = 1.2;
  r.repulsion.beta = 2.0;
  r.repulsion.steps = 1500;
  r.repulsion.step = 0.01;
  const Eigen::MatrixXd w = generate_features(r);
  const double second = w.squaredNorm() / static_cast<double>(r.n);
  EXPECT_NEAR(second / (r.sigma * r.sigma * r.dim), 1.0, 0.12) << second;
  EXPECT_LT(radial_ks_distance(w, r.sigma), 0.1);
}

TEST(FeatureGenerator, EveryMethodDrawsFromTheGaussianAndDependsOnTheSeedOnly) {
  for (const char* name : {"iid", "orthogonal", "sobol", "halton", "coulomb"}) {
    FeatureRequest r;
    r.method = *feature_method_from_name(name);
    EXPECT_EQ(feature_method_name(r.method), name);
    r.n = r.method == FeatureMethod::coulomb ? 128 : 4096;
    r.repulsion.tolerance = 1e-4;
    r.dim = 4;
    r.sigma = 0.5;
    r.seed = 9;
    omp_set_num_threads(1);
    const Eigen::MatrixXd one = generate_features(r);
    omp_set_num_threads(2);
    const Eigen::MatrixXd two = generate_features(r);
    ASSERT_EQ(one.rows(), r.n);
    ASSERT_EQ(one.cols(), r.dim);
    EXPECT_EQ(one, two) << name;
    r.seed = 10;
    EXPECT_NE(one, generate_features(r)) << name;
    // Mean 0 and covariance σ² I, within a few standard errors of an i.i.d. sample.
    const double tolerance = 4.0 * r.sigma * r.sigma * std::sqrt(2.0 / r.n);
    const Eigen::MatrixXd covariance = one.transpose() * one / static_cast<double>(r.n);
    EXPECT_LT(
        (covariance - r.sigma * r.sigma * Eigen::MatrixXd::Identity(4, 4)).cwiseAbs().maxCoeff(),
        tolerance)
        << name;
    EXPECT_LT(one.colwise().mean().cwiseAbs().maxCoeff(), 4.0 * r.sigma / std::sqrt(r.n)) << name;
  }
}

// At β = ∞ the tolerance is relative to the drift of W ∗ p: for s = 14 in d = 16 the drifts of
// λ = 1 are ~1e-11 at the start, and an absolute tolerance stopped the gas before its first step.
TEST(FeatureGenerator, GasMovesWhateverTheScaleOfItsKernel) {
  FeatureRequest r;
  r.method = FeatureMethod::coulomb;
  r.n = 64;
  r.dim = 16;
  r.repulsion.kernel = InteractionKernel::power(14.0);
  r.repulsion.max_iterations = 20;
  FeatureDiagnostics done;
  const Eigen::MatrixXd w = generate_features(r, &done);
  EXPECT_EQ(done.iterations, 20);
  r.method = FeatureMethod::iid;  // the gas's start
  EXPECT_GT((w - generate_features(r)).norm(), 1e-3 * w.norm());
}

TEST(FeatureGenerator, InitialFeaturesOfTheAttentionModelsFollowTheirLaw) {
  FeatureRequest iid;
  iid.n = 12;
  iid.dim = 4;
  iid.seed = 3;
  iid.replica = 5;
  EXPECT_EQ(initial_features("gaussian", 12, 4, 3, 5), generate_features(iid));
  for (const char* law : {"orthogonal", "sobol", "halton", "coulomb"}) {
    FeatureRequest r = iid;
    r.method = *feature_method_from_name(law);
    EXPECT_EQ(initial_features(law, 12, 4, 3, 5), generate_features(r)) << law;
  }
  EXPECT_THROW(initial_features("uniform", 12, 4, 3, 5), std::invalid_argument);
}

TEST(FeatureGenerator, RejectsImpossibleRequests) {
  EXPECT_FALSE(feature_method_from_name("random"));
  FeatureRequest r;
  r.n = 0;
  EXPECT_THROW(generate_features(r), std::invalid_argument);
  r.n = 8;
  r.sigma = -1.0;
  EXPECT_THROW(generate_features(r), std::invalid_argument);
  r.sigma = 1.0;
  r.method = FeatureMethod::coulomb;
  r.repulsion.lambda = 0.0;
  EXPECT_THROW(generate_features(r), std::invalid_argument);
  r.repulsion.lambda = 1.0;
  r.repulsion.kernel = InteractionKernel::power(2.5);  // s ≥ d
  EXPECT_THROW(generate_features(r), std::invalid_argument);
}

// Kolmogorov–Smirnov distance of |ω|²/(σ² d) over the rows of w to Fisher's F(d, 1), the law of
// (χ²_d/d)/χ²_1 that the Laplace kernel's Cauchy law gives it.
double cauchy_radial_ks_distance(const Eigen::MatrixXd& w, double sigma) {
  const double d = static_cast<double>(w.cols()), n = static_cast<double>(w.rows());
  const boost::math::fisher_f_distribution<double> f(d, 1.0);
  std::vector<double> ratio(static_cast<std::size_t>(w.rows()));
  for (Eigen::Index k = 0; k < w.rows(); ++k)
    ratio[static_cast<std::size_t>(k)] = w.row(k).squaredNorm() / (sigma * sigma * d);
  std::sort(ratio.begin(), ratio.end());
  double ks = 0.0;
  for (std::size_t k = 0; k < ratio.size(); ++k) {
    const double cdf = boost::math::cdf(f, ratio[k]);
    ks = std::max({ks, std::abs(cdf - k / n), std::abs(cdf - (k + 1) / n)});
  }
  return ks;
}

// The Laplace kernel's law for every fixed generator (Kolmogorov–Smirnov distance below the 1%
// critical value of an i.i.d. sample); the features depend on the seed only.
TEST(FeatureGenerator, EveryFixedMethodDrawsFromTheCauchyLawOfTheLaplaceKernel) {
  for (const char* name : {"iid", "orthogonal", "sobol", "halton"}) {
    FeatureRequest r;
    r.method = *feature_method_from_name(name);
    r.law = SpectralLaw::laplace;
    r.n = 2048;
    r.dim = 3;
    r.sigma = 0.5;
    r.seed = 4;
    omp_set_num_threads(1);
    const Eigen::MatrixXd one = generate_features(r);
    omp_set_num_threads(2);
    EXPECT_EQ(one, generate_features(r)) << name;
    EXPECT_LT(cauchy_radial_ks_distance(one, r.sigma), 1.63 / std::sqrt(double(r.n))) << name;
    r.seed = 5;
    EXPECT_NE(one, generate_features(r)) << name;
  }
  EXPECT_EQ(spectral_law_from_name("laplace"), SpectralLaw::laplace);
  EXPECT_EQ(spectral_law_name(SpectralLaw::gaussian), "gaussian");
  EXPECT_FALSE(spectral_law_from_name("matern"));
  EXPECT_DOUBLE_EQ(spectral_kernel(SpectralLaw::laplace, 2.0, 0.25), std::exp(-1.0));
  EXPECT_DOUBLE_EQ(spectral_kernel(SpectralLaw::gaussian, 2.0, 0.25), std::exp(-0.5));
}

// The compensated gas keeps the Cauchy law of the Laplace kernel, heavy tail included: at β = ∞
// (Coulomb in 3D, the minimiser) and at finite β (s = 0.5 in 2D), with the radial law's KS
// distance below the 1% critical value; the energy distance is refused (the law has no mean).
TEST(FeatureGenerator, CompensatedGasKeepsTheCauchyLawOfTheLaplaceKernel) {
  FeatureRequest r;
  r.method = FeatureMethod::coulomb;
  r.law = SpectralLaw::laplace;
  r.n = 400;
  r.dim = 3;
  r.sigma = 0.7;
  r.repulsion.kernel = InteractionKernel::power(1.0);
  r.repulsion.max_iterations = 2000;
  FeatureDiagnostics done;
  const Eigen::MatrixXd minimiser = generate_features(r, &done);
  const double critical = 1.63 / std::sqrt(static_cast<double>(r.n));
  const double ks_minimiser = cauchy_radial_ks_distance(minimiser, r.sigma);
  EXPECT_LT(ks_minimiser, critical);
  // It moved (most particles by more than 1% of σ; the norm of the set is the heavy tail's).
  r.method = FeatureMethod::iid;
  const Eigen::VectorXd moved = (minimiser - generate_features(r)).rowwise().norm();
  EXPECT_GT((moved.array() > 0.01 * r.sigma).count(), r.n / 2);

  r.method = FeatureMethod::coulomb;
  r.dim = 2;
  r.repulsion.kernel = InteractionKernel::power(0.5);
  r.repulsion.beta = 2.0;
  r.repulsion.steps = 1000;
  const Eigen::MatrixXd gas = generate_features(r);
  const double ks_gas = cauchy_radial_ks_distance(gas, r.sigma);
  EXPECT_LT(ks_gas, critical);
  std::printf("Cauchy radial KS distance, N = 400: minimiser (3D) %.4f, gas beta = 2 (2D) %.4f\n",
              ks_minimiser, ks_gas);

  r.repulsion.kernel = InteractionKernel::linear();
  EXPECT_THROW(generate_features(r), std::invalid_argument);
}

}  // namespace
}  // namespace cpm

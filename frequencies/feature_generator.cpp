#include "frequencies/feature_generator.hpp"

#include <algorithm>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "core/domain.hpp"
#include "core/feature_initialisation.hpp"
#include "core/particles.hpp"
#include "core/random_stream.hpp"
#include "core/stop_request.hpp"
#include "frequencies/compensated_confinement.hpp"
#include "frequencies/qmc_points.hpp"
#include "frequencies/riesz_potential_of_gaussian.hpp"
#include "frequencies/tabulated_riesz_potential.hpp"
#include "solvers/blocked_pair_sum.hpp"
#include "solvers/energy_minimizer.hpp"
#include "solvers/force_field.hpp"
#include "solvers/langevin.hpp"

namespace cpm {

namespace {

constexpr FeatureMethod kMethods[] = {FeatureMethod::iid, FeatureMethod::orthogonal,
                                      FeatureMethod::sobol, FeatureMethod::halton,
                                      FeatureMethod::coulomb};

// σ Φ⁻¹(u) entry-wise, Φ the standard normal distribution function.
Eigen::MatrixXd gaussian_quantiles(Eigen::MatrixXd u, double sigma) {
  for (Eigen::Index i = 0; i < u.size(); ++i)
    u.data()[i] = -sigma * std::sqrt(2.0) * boost::math::erfc_inv(2.0 * u.data()[i]);
  return u;
}

// The fixed generators' frequencies for p = N(0, σ² I) (i.i.d. for any method without one).
Eigen::MatrixXd gaussian_law_features(const FeatureRequest& r) {
  switch (r.method) {
    case FeatureMethod::orthogonal:
      return orthogonal_gaussian_features(r.n, r.dim, r.sigma, r.seed, r.replica);
    case FeatureMethod::sobol:
      return gaussian_quantiles(shifted_sobol_points(r.n, r.dim, r.seed, r.replica), r.sigma);
    case FeatureMethod::halton:
      return gaussian_quantiles(shifted_halton_points(r.n, r.dim, r.seed, r.replica), r.sigma);
    default:
      return gaussian_features(r.n, r.dim, r.sigma, r.seed, r.replica);
  }
}

// The multivariate Cauchy law of the Laplace kernel as the Gaussian scale mixture σ Z/|g|: each
// generator's Gaussian rows divided by an independent |g| (i.i.d. and orthogonal: one draw per
// frequency from its own stream; QMC: the Gaussian quantile of a (d + 1)-th coordinate, so the
// whole point set stays low-discrepancy; i.i.d. for any method without one).
Eigen::MatrixXd laplace_features(const FeatureRequest& r) {
  Eigen::MatrixXd z;
  Eigen::VectorXd g(r.n);
  if (r.method == FeatureMethod::sobol || r.method == FeatureMethod::halton) {
    const Eigen::MatrixXd u = r.method == FeatureMethod::sobol
                                  ? shifted_sobol_points(r.n, r.dim + 1, r.seed, r.replica)
                                  : shifted_halton_points(r.n, r.dim + 1, r.seed, r.replica);
    const Eigen::MatrixXd q = gaussian_quantiles(u, 1.0);
    z = r.sigma * q.leftCols(r.dim);
    g = q.col(r.dim);
  } else {
    z = r.method == FeatureMethod::orthogonal
            ? orthogonal_gaussian_features(r.n, r.dim, r.sigma, r.seed, r.replica)
            : gaussian_features(r.n, r.dim, r.sigma, r.seed, r.replica);
    for (Eigen::Index k = 0; k < r.n; ++k)
      g[k] = RandomStream(r.seed, RandomPurpose::spectral_mixing, r.replica,
                          static_cast<std::uint64_t>(k))
                 .normal();
  }
  return z.array().colwise() / g.array().abs();
}

Eigen::MatrixXd fixed_features(const FeatureRequest& r) {
  return r.law == SpectralLaw::laplace ? laplace_features(r) : gaussian_law_features(r);
}

// Draws of p at σ = 1 for the gas's start.
Eigen::MatrixXd standard_draws(const FeatureRequest& r) {
  FeatureRequest start = r;
  start.method = FeatureMethod::iid;
  start.sigma = 1.0;
  return fixed_features(start);
}

// The gas in units where σ = 1 (W∗p and the steps scale with σ), rescaled at the end.
Eigen::MatrixXd repulsive_features(const FeatureRequest& r, FeatureDiagnostics* diagnostics) {
  const RepulsionSettings& g = r.repulsion;
  if (!(g.lambda > 0.0)) throw std::invalid_argument("the coulomb features need lambda > 0");
  if (!(g.beta > 0.0)) throw std::invalid_argument("the coulomb features need beta > 0");
  if (g.kernel.kind == InteractionKernel::Kind::power && g.kernel.s > 0.0 && r.n < 2)
    throw std::invalid_argument("the coulomb features need N >= 2");
  Particles particles(standard_draws(r));
  const bool finite_temperature = !std::isinf(g.beta);
  // W ∗ p: the Gaussian's closed forms at β = ∞ (the minimiser's last digits), a table otherwise
  // and for the Cauchy law (whose exact form is a quadrature).
  std::shared_ptr<const RadialConvolution> convolution;
  if (finite_temperature || r.law == SpectralLaw::laplace)
    convolution = shared_riesz_table(g.kernel, r.dim, 1.0, r.law);
  else
    convolution = std::make_shared<const RieszPotentialOfGaussian>(g.kernel, r.dim, 1.0);
  std::shared_ptr<CompensatedConfinement> potential;
  double lambda = g.lambda;
  if (finite_temperature) {
    // The gas runs in the time s = t/β: the Langevin dynamics of β' = 1 and λ' = βλ has the same
    // Gibbs law p^{⊗N} exp(−βλ N ℰ_N) (docs/features.md §5), and its anchor relaxes in s ~ 1
    // whatever β (in t it took ~β).
    lambda *= g.beta;
    potential = std::make_shared<CompensatedConfinement>(convolution, lambda, 1.0, r.law);
  } else {
    // At β = ∞, λ only scales the energy: the gas takes λ = 1 / RMS |∇(W ∗ p)| over the starting
    // particles, so that the tolerance is relative to the drift's scale (for s near d the drifts
    // of λ = 1 are ~1e-11 in d = 16, below any absolute tolerance).
    double square = 0.0;
    for (Eigen::Index k = 0; k < r.n; ++k) {
      const double r2 = particles.positions.row(k).squaredNorm();
      square += std::pow(convolution->gradient_factor(r2), 2) * r2 / static_cast<double>(r.n);
    }
    if (square > 0.0 && std::isfinite(square)) lambda = 1.0 / std::sqrt(square);
    potential = std::make_shared<CompensatedConfinement>(convolution, lambda, g.beta, r.law);
  }
  ForceField forces(potential, make_blocked_pair_sum(g.kernel), lambda);
  const Domain space = Domain::whole_space(r.dim);
  FeatureDiagnostics done;
  if (!finite_temperature) {
    // L-BFGS with H₀ = γ I: in d > 3 the Newton preconditioner is block Jacobi over pair Hessian
    // blocks that cost O(N² d²), and with it the line search still took ~10 force evaluations
    // per iteration, against ~1.4 here (bench/RESULTS.md, "Random-feature frequencies").
    MinimizerParameters parameters;
    parameters.method = MinimizerMethod::lbfgs;
    parameters.tolerance = g.tolerance;
    parameters.max_iterations = g.max_iterations;
    EnergyMinimizer minimizer(forces, nullptr, space, parameters);
    const MinimizationResult result = minimizer.minimize(
        particles.positions, [](const MinimizerProgress&) { stop_if_requested(); });
    done = {result.iterations, result.converged, result.gradient_norm};
  } else {
    // The repulsion's stiffness grows like βλ: above βλ = 1 the steps shrink by βλ and their
    // number grows by βλ (the same time span s), so that the Euler–Maruyama bias of the stiff
    // modes stays that of βλ = 1. The Cauchy anchor's curvature at 0 is d + 1 times the
    // Gaussian's: its steps shrink by that factor too.
    const double stiffness =
        std::max(1.0, lambda) * negative_log_density_factor(r.law, r.dim, 1.0, 0.0);
    LangevinParameters parameters;
    parameters.step = g.step / stiffness;
    parameters.beta = 1.0;
    parameters.seed = r.seed;
    parameters.replica = r.replica;
    LangevinIntegrator langevin(forces, space, parameters);
    const int steps = static_cast<int>(std::ceil(g.steps * stiffness));
    for (int step = 0; step < steps; ++step) {
      stop_if_requested();
      langevin.step(particles);
    }
    done = {steps, true, 0.0};
  }
  if (diagnostics) *diagnostics = done;
  return r.sigma * particles.positions;
}

}  // namespace

std::string feature_method_name(FeatureMethod method) {
  switch (method) {
    case FeatureMethod::iid:
      return "iid";
    case FeatureMethod::orthogonal:
      return "orthogonal";
    case FeatureMethod::sobol:
      return "sobol";
    case FeatureMethod::halton:
      return "halton";
    case FeatureMethod::coulomb:
      return "coulomb";
  }
  return "iid";
}

std::optional<FeatureMethod> feature_method_from_name(const std::string& name) {
  for (FeatureMethod m : kMethods)
    if (feature_method_name(m) == name) return m;
  return std::nullopt;
}

Eigen::MatrixXd initial_features(const std::string& law, Eigen::Index n, int d, std::uint64_t seed,
                                 std::uint64_t replica) {
  FeatureRequest r;
  const std::optional<FeatureMethod> method = feature_method_from_name(law);
  if (law != "gaussian" && !method)
    throw std::invalid_argument("unknown particle law '" + law + "'");
  r.method = law == "gaussian" ? FeatureMethod::iid : *method;
  r.n = n;
  r.dim = d;
  r.seed = seed;
  r.replica = replica;
  return generate_features(r);
}

Eigen::MatrixXd generate_features(const FeatureRequest& r, FeatureDiagnostics* diagnostics) {
  if (r.n < 1) throw std::invalid_argument("features need N >= 1");
  if (r.dim < 1) throw std::invalid_argument("features need d >= 1");
  if (!(r.sigma > 0.0)) throw std::invalid_argument("features need sigma > 0");
  if (diagnostics) *diagnostics = {};
  return r.method == FeatureMethod::coulomb ? repulsive_features(r, diagnostics)
                                            : fixed_features(r);
}

}  // namespace cpm

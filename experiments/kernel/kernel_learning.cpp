#include "experiments/kernel/kernel_learning.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/domain.hpp"
#include "core/particles.hpp"
#include "core/random_stream.hpp"
#include "core/stop_request.hpp"
#include "experiments/model_builder.hpp"
#include "solvers/force_field.hpp"

namespace cpm {

PairwiseDistanceSummary pairwise_distances(const Eigen::MatrixXd& w) {
  const Eigen::Index n = w.rows();
  PairwiseDistanceSummary s;
  if (n < 2) return s;
  // ‖ω_k − ω_l‖² = ‖ω_k‖² + ‖ω_l‖² − 2 ω_kᵀω_l, from one Gram matrix.
  const Eigen::MatrixXd gram = w * w.transpose();
  double min2 = std::numeric_limits<double>::infinity(), sum = 0.0;
#pragma omp parallel for schedule(dynamic, 16) reduction(min : min2) reduction(+ : sum) if (n > 256)
  for (Eigen::Index k = 0; k < n; ++k)
    for (Eigen::Index l = k + 1; l < n; ++l) {
      const double r2 = std::max(gram(k, k) + gram(l, l) - 2.0 * gram(k, l), 0.0);
      min2 = std::min(min2, r2);
      sum += std::sqrt(r2);
    }
  s.min = std::sqrt(min2);
  s.mean = sum / (0.5 * static_cast<double>(n) * static_cast<double>(n - 1));
  return s;
}

Eigen::MatrixXd learn_particles(
    std::shared_ptr<const Eigen::MatrixXd> x, const Eigen::MatrixXd& targets, const FeatureMap& map,
    Eigen::MatrixXd initial, const LearningSettings& s, std::vector<TrainingRecord>* trace,
    const std::function<void(const TrainingRecord&)>& on_record, LearningReport* report,
    const std::function<void(int, const Eigen::MatrixXd&)>& on_checkpoint) {
  const int d = static_cast<int>(initial.cols());
  if (x->cols() != d)
    throw std::invalid_argument("learn_particles: data and particles differ in dimension");
  const Domain domain = std::isinf(s.radius) ? Domain::whole_space(d)
                                             : Domain::ball(Eigen::VectorXd::Zero(d), s.radius);
  AlignmentSettings align = s.alignment;
  align.anchor_precision = 0.0;
  auto potential = std::make_shared<AlignmentPotential>(x, targets, map, align);
  domain.project_all(initial);

  // Drift scales at the initial particles: alignment (γ = 1, no anchor) and repulsion (λ = 1).
  const Eigen::Index n_particles = initial.rows();
  auto rms_rows = [](const Eigen::MatrixXd& g) {
    return g.rows() ? std::sqrt(g.squaredNorm() / static_cast<double>(g.rows())) : 0.0;
  };
  Eigen::VectorXd values;
  Eigen::MatrixXd drift;
  potential->set_gamma(1.0);
  potential->evaluate(initial, values, &drift);
  const double g0 = rms_rows(drift);
  LearningReport rep;
  rep.gamma = s.relative_gamma ? (g0 > 0.0 ? s.alignment.gamma / g0 : 0.0) : s.alignment.gamma;
  rep.alignment_drift = rep.gamma * g0;
  potential->set_gamma(rep.gamma);
  rep.anchor_precision = s.anchor && std::isfinite(s.dynamics.beta)
                             ? 1.0 / (s.prior_scale * s.prior_scale * s.dynamics.beta)
                             : 0.0;
  rep.anchor_ratio_initial = rep.alignment_drift > 0.0
                                 ? rep.anchor_precision * rms_rows(initial) / rep.alignment_drift
                                 : 0.0;
  const bool has_repulsion = s.repulsion.kernel.kind != InteractionKernel::Kind::none;
  ForceField repulsion_only(
      std::make_shared<ZeroPotential>(),
      make_interaction_sum(s.repulsion, domain, n_particles, s.source, "repulsion"), 1.0);
  auto repulsion_rms = [&](const Eigen::MatrixXd& w) {
    if (!has_repulsion || w.rows() < 2) return 0.0;
    Eigen::MatrixXd f;
    repulsion_only.compute(w, f, nullptr);
    return rms_rows(f);
  };
  const double r0 = repulsion_rms(initial);
  InteractionConfig repulsion = s.repulsion;
  if (s.drift_fraction >= 0.0)
    repulsion.lambda = r0 > 0.0 ? s.drift_fraction * rep.alignment_drift / r0 : 0.0;
  rep.lambda = repulsion.lambda;
  rep.repulsion_ratio_initial =
      rep.alignment_drift > 0.0 ? repulsion.lambda * r0 / rep.alignment_drift : 0.0;
  potential->set_anchor_precision(rep.anchor_precision);

  const ParticleSystem system = build_particle_system(
      {domain, potential, repulsion, s.dynamics, n_particles, s.seed, s.source, "repulsion"}, 0);

  Eigen::MatrixXd diagnostic_targets = targets;
  if (s.alignment.centred) centre_targets(diagnostic_targets);
  auto record = [&](int step, const Eigen::MatrixXd& w) {
    if (!trace && !on_record) return;
    TrainingRecord r{step, alignment(map, *x, diagnostic_targets, w), pairwise_distances(w)};
    if (trace) trace->push_back(r);
    if (on_record) on_record(r);
  };

  Particles particles(std::move(initial));
  record(0, particles.positions);
  const int steps = s.dynamics.steps;
  for (int step = 1; step <= steps; ++step) {
    stop_if_requested();
    potential->select_batch(static_cast<std::uint64_t>(step - 1));
    system.integrator->advance_to(particles, step * s.dynamics.step);
    if (!particles.positions.allFinite())
      throw std::runtime_error("kernel learning: particles became non-finite at step " +
                               std::to_string(step) +
                               " (reduce dynamics.step, or use a mollified repulsion)");
    if (step % s.record_every == 0 || step == steps) record(step, particles.positions);
    if (on_checkpoint &&
        std::find(s.checkpoints.begin(), s.checkpoints.end(), step) != s.checkpoints.end())
      on_checkpoint(step, particles.positions);
  }
  if (report) {
    potential->set_anchor_precision(0.0);
    potential->evaluate(particles.positions, values, &drift);
    const double a_final = rms_rows(drift);
    rep.repulsion_ratio_final =
        a_final > 0.0 ? repulsion.lambda * repulsion_rms(particles.positions) / a_final : 0.0;
    *report = rep;
  }
  return particles.positions;
}

double chi_square_divergence_from_uniform(const Eigen::VectorXd& q) {
  const double m = static_cast<double>(q.size());
  return (m * q.array() - 1.0).square().sum() / m;
}

Eigen::VectorXd importance_weights(const Eigen::VectorXd& scores, double rho) {
  const Eigen::Index m = scores.size();
  if (m == 0) throw std::invalid_argument("importance weights: empty candidate pool");
  const double dm = static_cast<double>(m);
  // For a given κ > 0, q_j(t) = max(0, 1 + (s_j − t)/κ)/M; Σ q(t) decreases in t: bisect to 1.
  auto weights = [&](double kappa) {
    double lo = scores.minCoeff() - kappa, hi = scores.maxCoeff() + kappa;  // Σq ≥ 1 at lo, 0 at hi
    Eigen::VectorXd q(m);
    for (int it = 0; it < 200; ++it) {
      const double t = 0.5 * (lo + hi);
      const double total = ((1.0 + (scores.array() - t) / kappa).max(0.0)).sum() / dm;
      (total > 1.0 ? lo : hi) = t;
    }
    q = (1.0 + (scores.array() - 0.5 * (lo + hi)) / kappa).max(0.0) / dm;
    return Eigen::VectorXd(q / q.sum());
  };
  const double spread = scores.maxCoeff() - scores.minCoeff();
  if (rho <= 0.0 || spread <= 0.0) return Eigen::VectorXd::Constant(m, 1.0 / dm);
  // The divergence decreases in κ; the smallest κ with D ≤ ρ is the constrained optimum.
  double lo = 1e-12 * spread, hi = spread;
  while (chi_square_divergence_from_uniform(weights(hi)) > rho) hi *= 2.0;
  if (chi_square_divergence_from_uniform(weights(lo)) <= rho) return weights(lo);
  for (int it = 0; it < 100; ++it) {
    const double mid = std::sqrt(lo * hi);
    (chi_square_divergence_from_uniform(weights(mid)) > rho ? lo : hi) = mid;
  }
  return weights(hi);
}

std::vector<Eigen::Index> sample_indices(const Eigen::VectorXd& q, Eigen::Index count,
                                         std::uint64_t seed) {
  std::vector<double> cumulative(static_cast<std::size_t>(q.size()));
  double total = 0.0;
  for (Eigen::Index j = 0; j < q.size(); ++j) cumulative[j] = (total += q[j]);
  std::vector<Eigen::Index> out(static_cast<std::size_t>(count));
  RandomStream s(seed, RandomPurpose::importance_draws, 0, 0);
  for (auto& index : out) {
    const double u = s.uniform() * total;
    index = std::min<Eigen::Index>(
        std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin(),
        q.size() - 1);
  }
  return out;
}

}  // namespace cpm

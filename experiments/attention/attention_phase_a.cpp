#include "experiments/attention/attention_phase_a.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "core/domain.hpp"
#include "core/particles.hpp"
#include "core/random_stream.hpp"
#include "experiments/attention/token_alignment.hpp"
#include "experiments/model_builder.hpp"
#include "io/phase_a_tokens_file.hpp"
#include "io/progress.hpp"
#include "physics/alignment.hpp"

namespace cpm {

namespace {

// The first `count` sequences of a permutation keyed by seed.
std::vector<std::size_t> phase_a_subset(std::size_t n, std::size_t count, std::uint64_t seed) {
  std::vector<std::size_t> order =
      random_permutation(n, RandomStream(seed, RandomPurpose::phase_a_sequences, 0, 0));
  order.resize(std::min(n, count));
  return order;
}

// Key vectors (and, if `queries`, query vectors below them) of every token of the subset, as the
// attention's projections give them (not yet scaled by the feature input scale), one
// (rows, d_head) matrix per head of `layer`. With tied W_Q = W_K the queries are the keys and only
// the keys are returned.
std::vector<Eigen::MatrixXd> head_tokens(TransformerClassifier<float>& model,
                                         const SequenceSet& train,
                                         const std::vector<std::size_t>& subset, int layer,
                                         int batch_size, bool queries) {
  const ModelShape& s = model.shape();
  std::size_t tokens_total = 0;
  for (auto i : subset) tokens_total += train.tokens[i].size();
  const bool both = queries && !s.qk_tied;
  std::vector<Eigen::MatrixXd> x(s.heads,
                                 Eigen::MatrixXd((both ? 2 : 1) * tokens_total, s.head_size()));
  BatchBuffer buffer;
  std::size_t row = 0;
  for (std::size_t start = 0; start < subset.size(); start += batch_size) {
    const int B = static_cast<int>(std::min<std::size_t>(batch_size, subset.size() - start));
    TokenBatch batch = buffer.gather(train, subset.data() + start, B);
    batch.labels = nullptr;  // inference
    model.forward(batch);
    const AttentionLayout layout = model.attention_layout(B, batch.length);
    for (int b = 0; b < B; ++b) {
      for (int h = 0; h < s.heads; ++h) {
        const auto k = layout.block(model.qkv(layer), b, h, layout.k_offset());
        const auto q = layout.block(model.qkv(layer), b, h, 0);
        for (int t = 0; t < batch.lengths[b]; ++t) {
          x[h].row(row + t) = k.col(t).cast<double>().transpose();
          if (both) x[h].row(tokens_total + row + t) = q.col(t).cast<double>().transpose();
        }
      }
      row += batch.lengths[b];
    }
  }
  return x;
}

double rms_row_norm(const Eigen::MatrixXd& m) {
  return std::sqrt(m.rowwise().squaredNorm().mean());
}

}  // namespace

PhaseADrifts phase_a_drifts(const ExternalPotential& potential, InteractionSum* pairs,
                            const Eigen::MatrixXd& x) {
  Eigen::VectorXd value;
  Eigen::MatrixXd gradient;
  potential.evaluate(x, value, &gradient);
  PhaseADrifts d;
  d.alignment = rms_row_norm(gradient);
  if (pairs) {
    pairs->compute(x, gradient, nullptr);
    d.repulsion_per_lambda = rms_row_norm(gradient) / static_cast<double>(x.rows());
  }
  return d;
}

LinearFitResidual linear_fit_residual(const Eigen::MatrixXd& before, const Eigen::MatrixXd& after) {
  if (before.rows() != after.rows() || before.cols() != after.cols())
    throw std::invalid_argument("linear fit: the two particle sets differ in shape");
  const Eigen::MatrixXd a = before.colPivHouseholderQr().solve(after);
  const double residual = (before * a - after).norm(), change = (after - before).norm();
  LinearFitResidual r;
  r.relative = after.norm() > 0.0 ? residual / after.norm() : 0.0;
  r.of_change = change > 0.0 ? std::min(1.0, residual / change) : 0.0;
  return r;
}

Eigen::MatrixXd spread_token_targets(const Eigen::MatrixXd& sequence_targets,
                                     const std::vector<std::size_t>& lengths, bool both) {
  const std::size_t n = lengths.size();
  if (static_cast<std::size_t>(sequence_targets.rows()) != n)
    throw std::invalid_argument("phase A: one target row per sequence expected");
  std::size_t tokens_total = 0;
  for (std::size_t len : lengths) tokens_total += len;
  // With keys and queries, the token rows are keys then queries; each half carries the targets
  // T_i n_tok/(n |S_i|), which is T_i n_rows/(n |S_i| · 2): the two sources weigh 1/2 each.
  Eigen::MatrixXd token_targets((both ? 2 : 1) * tokens_total, sequence_targets.cols());
  for (std::size_t i = 0, row = 0; i < n; ++i) {
    const double weight = static_cast<double>(tokens_total) / (static_cast<double>(n) * lengths[i]);
    for (std::size_t t = 0; t < lengths[i]; ++t, ++row) {
      token_targets.row(row) = weight * sequence_targets.row(i);
      if (both) token_targets.row(tokens_total + row) = token_targets.row(row);
    }
  }
  return token_targets;
}

Domain phase_a_domain(const std::optional<double>& radius, int d) {
  const double r = radius.value_or(2.0 * std::sqrt(static_cast<double>(d)));
  return r > 0.0 ? Domain::ball(Eigen::VectorXd::Zero(d), r) : Domain::whole_space(d);
}

TokenNormalisation phase_a_token_normalisation(bool normalised, KeyNormalisation keys) {
  if (normalised && keys != KeyNormalisation::none)
    throw std::invalid_argument(
        "normalised: the keys' own normalisation is aligned when keys are normalised");
  switch (keys) {
    case KeyNormalisation::l1:
      return TokenNormalisation::l1;
    case KeyNormalisation::l2:
      return TokenNormalisation::l2;
    default:
      return normalised ? TokenNormalisation::mean : TokenNormalisation::none;
  }
}

HeadAlignment align_head_tokens(Eigen::MatrixXd& omega, std::shared_ptr<const Eigen::MatrixXd> x,
                                const Eigen::MatrixXd& token_targets, const FeatureMap& map,
                                KeyNormalisation keys, const PhaseAConfig& config,
                                std::uint64_t seed, std::uint64_t replica,
                                const std::function<void(int)>& after_step) {
  const auto clock_start = std::chrono::steady_clock::now();
  const int m = static_cast<int>(omega.rows()), hs = static_cast<int>(omega.cols());
  const Domain domain = phase_a_domain(config.radius, hs);
  Particles particles(m, hs);
  particles.positions = omega;
  domain.project_all(particles.positions);
  const Eigen::MatrixXd initial = particles.positions;
  auto potential = std::make_shared<TokenAlignmentPotential>(
      std::move(x), token_targets, map, 1.0, phase_a_token_normalisation(config.normalised, keys));
  // γ_eff = γ / g_0 with g_0 the RMS alignment force at the initial particles (γ = 1).
  std::unique_ptr<InteractionSum> pairs =
      config.interaction.kernel.kind == InteractionKernel::Kind::none
          ? nullptr
          : make_interaction_sum(config.interaction, domain, m, config.source,
                                 "phase_a.interaction");
  const PhaseADrifts unit = phase_a_drifts(*potential, pairs.get(), particles.positions);
  if (config.relative_gamma) {
    const double g0 = unit.alignment;
    potential->set_gamma(g0 > 0.0 && std::isfinite(g0) ? config.gamma / g0 : config.gamma);
  } else {
    potential->set_gamma(config.gamma);
  }
  const double alignment_drift = potential->gamma() * unit.alignment;
  InteractionConfig interaction = config.interaction;
  if (config.repulsion_fraction)
    interaction.lambda =
        unit.repulsion_per_lambda > 0.0
            ? *config.repulsion_fraction * alignment_drift / unit.repulsion_per_lambda
            : 0.0;
  const ParticleSystem system =
      build_particle_system({domain, potential, interaction, config.dynamics, m, seed,
                             config.source, "phase_a.interaction"},
                            replica);
  HeadAlignment a;
  a.before = potential->alignment(particles.positions);
  a.gamma = potential->gamma();
  a.lambda = interaction.lambda;
  a.repulsion_ratio_start = alignment_drift > 0.0
                                ? interaction.lambda * unit.repulsion_per_lambda / alignment_drift
                                : 0.0;
  a.norm = std::sqrt(initial.rowwise().squaredNorm().mean());
  double previous = a.before;
  for (int step = 1; step <= std::max(config.dynamics.steps, 0); ++step) {
    system.integrator->advance_to(particles, step * config.dynamics.step);
    a.steps = step;
    if (after_step) after_step(step);
    if (config.tolerance > 0.0 && step % config.check_every == 0) {
      const double now = potential->alignment(particles.positions);
      if (std::abs(now - previous) <= config.tolerance * std::abs(previous)) {
        a.converged = true;
        break;
      }
      previous = now;
    }
  }
  if (!particles.positions.allFinite())
    throw std::runtime_error(
        "phase A: particles became non-finite (reduce phase_a.step or use a mollifier)");
  a.after = potential->alignment(particles.positions);
  a.displacement = std::sqrt((particles.positions - initial).rowwise().squaredNorm().mean());
  const PhaseADrifts end = phase_a_drifts(*potential, pairs.get(), particles.positions);
  a.repulsion_ratio_end = end.alignment > 0.0 ? interaction.lambda * end.repulsion_per_lambda /
                                                    (potential->gamma() * end.alignment)
                                              : 0.0;
  const LinearFitResidual fit = linear_fit_residual(initial, particles.positions);
  a.fit_residual = fit.relative;
  a.unabsorbed = fit.of_change;
  omega = particles.positions;
  a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - clock_start).count();
  return a;
}

std::vector<HeadAlignment> run_phase_a(TransformerClassifier<float>& model,
                                       const SequenceSet& train, int classes,
                                       const PhaseAConfig& config, std::uint64_t seed,
                                       int batch_size, bool progress,
                                       const std::string& tokens_file) {
  const ModelShape& s = model.shape();
  const int hs = s.head_size(), m = s.features;
  const auto subset = phase_a_subset(train.size(), config.sequences, seed);
  const std::size_t n = subset.size();

  // Sequence targets (±1, or one-hot), centred over the subset if asked, then spread over tokens.
  Eigen::VectorXi labels(n);
  std::vector<std::size_t> lengths(n);
  for (std::size_t i = 0; i < n; ++i) {
    labels[i] = train.labels[subset[i]];
    lengths[i] = train.tokens[subset[i]].size();
  }
  Eigen::MatrixXd sequence_targets = alignment_targets(labels, classes);
  if (config.centred) centre_targets(sequence_targets);
  const bool both = config.queries_and_keys && !s.qk_tied;
  const Eigen::MatrixXd token_targets = spread_token_targets(sequence_targets, lengths, both);
  const std::size_t tokens_total = token_targets.rows() / (both ? 2 : 1);

  std::optional<PhaseATokensFile> file;
  if (!tokens_file.empty()) {
    std::vector<std::vector<int>> sequences;
    for (auto i : subset) sequences.push_back(train.tokens[i]);
    file.emplace(tokens_file, sequences, labels);
  }
  // The scale of the attention's feature input, in double (φ reads scale · k).
  const double scale = feature_input_scale<double>(s.feature_map, hs);
  const FeatureMap map(s.feature_map.kind);
  const int cap = std::max(config.dynamics.steps, 1);
  std::vector<HeadAlignment> report;
  Progress bar("phase A", static_cast<double>(s.layers) * s.heads * cap, progress);
  for (int l = 0; l < s.layers; ++l) {
    const std::vector<Eigen::MatrixXd> tokens =
        head_tokens(model, train, subset, l, batch_size, both || file.has_value());
    for (int h = 0; h < s.heads; ++h) {
      float* block = model.head_particles(l, h);
      Eigen::MatrixXd omega(m, hs);
      for (int k = 0; k < m; ++k)
        for (int a = 0; a < hs; ++a) omega(k, a) = block[k * hs + a];
      const Eigen::MatrixXd initial = omega;
      const auto x = std::make_shared<const Eigen::MatrixXd>(
          scale * tokens[h].topRows((both ? 2 : 1) * tokens_total));
      const std::uint64_t replica = static_cast<std::uint64_t>(l) * s.heads + h;
      const double done = static_cast<double>(l * s.heads + h) * cap;
      HeadAlignment a =
          align_head_tokens(omega, x, token_targets, map, s.feature_map.key_normalisation, config,
                            seed, replica, [&](int step) { bar.update(done + step); });
      a.layer = l;
      a.head = h;
      report.push_back(a);
      if (file) {
        const Eigen::MatrixXd& rows = tokens[h];
        const bool has_queries = rows.rows() > static_cast<Eigen::Index>(tokens_total);
        file->add_head(l, h, rows.topRows(tokens_total),
                       has_queries ? rows.bottomRows(tokens_total) : rows.topRows(tokens_total),
                       initial, omega);
      }
      for (int k = 0; k < m; ++k)
        for (int a2 = 0; a2 < hs; ++a2) block[k * hs + a2] = static_cast<float>(omega(k, a2));
    }
  }
  bar.finish();
  return report;
}

}  // namespace cpm

#include "experiments/attention/attention_phase_a.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "core/domain.hpp"
#include "core/particles.hpp"
#include "core/random_stream.hpp"
#include "experiments/model_builder.hpp"
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

// Scaled key vectors of every token of the subset, one (n_tok, d_head) matrix per head of `layer`.
std::vector<Eigen::MatrixXd> head_keys(TransformerClassifier<float>& model,
                                       const SequenceSet& train,
                                       const std::vector<std::size_t>& subset, int layer,
                                       int batch_size) {
  const ModelShape& s = model.shape();
  std::size_t tokens_total = 0;
  for (auto i : subset) tokens_total += train.tokens[i].size();
  std::vector<Eigen::MatrixXd> keys(s.heads, Eigen::MatrixXd(tokens_total, s.head_size()));
  BatchBuffer buffer;
  const double scale = model.feature_input_scale();
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
        for (int t = 0; t < batch.lengths[b]; ++t)
          keys[h].row(row + t) = (scale * k.col(t).cast<double>()).transpose();
      }
      row += batch.lengths[b];
    }
  }
  return keys;
}

}  // namespace

std::vector<HeadAlignment> run_phase_a(TransformerClassifier<float>& model,
                                       const SequenceSet& train, int classes,
                                       const PhaseAConfig& config, std::uint64_t seed,
                                       int batch_size, bool progress) {
  const ModelShape& s = model.shape();
  const int hs = s.head_size(), m = s.features;
  const auto subset = phase_a_subset(train.size(), config.sequences, seed);
  const std::size_t n = subset.size();

  // Sequence targets (±1, or one-hot), centred over the subset if asked, then spread over tokens.
  Eigen::VectorXi labels(n);
  for (std::size_t i = 0; i < n; ++i) labels[i] = train.labels[subset[i]];
  Eigen::MatrixXd sequence_targets = alignment_targets(labels, classes);
  if (config.centred) centre_targets(sequence_targets);
  std::size_t tokens_total = 0;
  for (auto i : subset) tokens_total += train.tokens[i].size();
  Eigen::MatrixXd token_targets(tokens_total, sequence_targets.cols());
  for (std::size_t i = 0, row = 0; i < n; ++i) {
    const std::size_t len = train.tokens[subset[i]].size();
    const double weight = static_cast<double>(tokens_total) / (static_cast<double>(n) * len);
    for (std::size_t t = 0; t < len; ++t)
      token_targets.row(row++) = weight * sequence_targets.row(i);
  }

  const double radius = config.radius.value_or(2.0 * std::sqrt(static_cast<double>(hs)));
  const Domain domain =
      radius > 0.0 ? Domain::ball(Eigen::VectorXd::Zero(hs), radius) : Domain::whole_space(hs);
  const FeatureMap map(s.feature_map.kind);
  std::vector<HeadAlignment> report;
  Progress bar("phase A",
               static_cast<double>(s.layers) * s.heads * std::max(config.dynamics.steps, 1),
               progress);
  for (int l = 0; l < s.layers; ++l) {
    const std::vector<Eigen::MatrixXd> keys = head_keys(model, train, subset, l, batch_size);
    for (int h = 0; h < s.heads; ++h) {
      float* omega = model.head_particles(l, h);
      Particles particles(m, hs);
      for (int k = 0; k < m; ++k)
        for (int a = 0; a < hs; ++a) particles.positions(k, a) = omega[k * hs + a];
      domain.project_all(particles.positions);
      const Eigen::MatrixXd initial = particles.positions;
      auto x = std::make_shared<const Eigen::MatrixXd>(keys[h]);
      AlignmentSettings settings;
      settings.gamma = config.gamma;
      settings.centred = false;  // already centred per sequence above
      if (config.relative_gamma) {
        // γ_eff = γ / g_0 with g_0 the RMS alignment force at the initial particles (γ = 1).
        settings.gamma = 1.0;
        const AlignmentPotential unit(x, token_targets, map, settings);
        Eigen::VectorXd value;
        Eigen::MatrixXd gradient;
        unit.evaluate(particles.positions, value, &gradient);
        const double g0 = std::sqrt(gradient.rowwise().squaredNorm().mean());
        settings.gamma = g0 > 0.0 && std::isfinite(g0) ? config.gamma / g0 : config.gamma;
      }
      auto potential = std::make_shared<AlignmentPotential>(x, token_targets, map, settings);
      const std::uint64_t replica = static_cast<std::uint64_t>(l) * s.heads + h;
      const ParticleSystem system =
          build_particle_system({domain, potential, config.interaction, config.dynamics, m, seed,
                                 config.source, "phase_a.interaction"},
                                replica);
      HeadAlignment a;
      a.layer = l;
      a.head = h;
      a.before = alignment(map, *x, token_targets, particles.positions);
      a.gamma = settings.gamma;
      a.norm = std::sqrt(initial.rowwise().squaredNorm().mean());
      const int steps = config.dynamics.steps;
      for (int step = 1; step <= steps; ++step) {
        system.integrator->advance_to(particles, step * config.dynamics.step);
        bar.update(static_cast<double>((l * s.heads + h) * steps + step));
      }
      if (!particles.positions.allFinite())
        throw std::runtime_error(
            "phase A: particles became non-finite (reduce phase_a.step or use a mollifier)");
      a.after = alignment(map, *x, token_targets, particles.positions);
      a.displacement = std::sqrt((particles.positions - initial).rowwise().squaredNorm().mean());
      report.push_back(a);
      for (int k = 0; k < m; ++k)
        for (int a2 = 0; a2 < hs; ++a2)
          omega[k * hs + a2] = static_cast<float>(particles.positions(k, a2));
    }
  }
  bar.finish();
  return report;
}

}  // namespace cpm

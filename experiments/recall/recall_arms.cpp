#include "experiments/recall/recall_arms.hpp"

#include <algorithm>
#include <cmath>

#include "core/random_stream.hpp"
#include "frequencies/feature_generator.hpp"

namespace cpm {

namespace {

// Particle blocks of `blocks` heads, (rows, d) row-major each, from the arm's generator; with
// antithetic particles (only for the random-feature maps: hedgehog's φ holds ±Wx already, and a
// projection's rows ±p would repeat features) the second half of each block is the negative of the
// first. A projection (taylor, rebased, projected dpfp) starts with rows of unit length, so that
// u = s P x is, at τ = 1, s times x's coordinates along random directions; rebased's γ and β rows
// after its d′ projection rows start at γ = 1, β = 0 (transformer/attention_feature_maps.hpp).
// `draw` keys the random stream: 0 for the particles drawn once, step + 1 for a redraw at a
// training step, and −(batch + 1) for an evaluation batch (offsets far apart, so no two draws share
// a stream).
void draw_particles(float* particles, int blocks, int rows, int d, const RecallModelConfig& m,
                    const RecallVariant& variant, std::uint64_t seed, std::int64_t draw) {
  const bool projection = is_projected(variant.map);
  const bool antithetic =
      m.antithetic && variant.map.kind != FeatureMapKind::hedgehog && !projection;
  const std::string& law = variant.particle_init.empty() ? m.particle_init : variant.particle_init;
  // rebased: the d′ projection rows are drawn, γ and β set
  int drawn = rows;
  if (variant.map.kind == FeatureMapKind::rebased)
    while (rebased_block_rows(drawn, d) > rows) --drawn;
  const int base = antithetic ? drawn / 2 : drawn;
  for (int h = 0; h < blocks; ++h) {
    const std::uint64_t stream_offset =
        draw >= 0 ? static_cast<std::uint64_t>(draw)
                  : (std::uint64_t{1} << 38) + static_cast<std::uint64_t>(-draw);
    const std::uint64_t replica = stream_offset * 1024 + static_cast<std::uint64_t>(h);
    Eigen::MatrixXd w = initial_features(law, base, d, seed, replica);
    if (projection) w.rowwise().normalize();
    float* block = particles + static_cast<std::size_t>(h) * rows * d;
    for (int k = 0; k < base; ++k)
      for (int a = 0; a < d; ++a) {
        block[k * d + a] = static_cast<float>(w(k, a));
        if (antithetic) block[(k + base) * d + a] = -static_cast<float>(w(k, a));
      }
    if (drawn < rows) {  // γ = 1 on the first d′ entries of its rows, the rest and β zero
      float* affine = block + static_cast<std::size_t>(drawn) * d;
      std::fill(affine, block + static_cast<std::size_t>(rows) * d, 0.0f);
      std::fill_n(affine, drawn, 1.0f);
    }
  }
}

// Target weights for Phase A of one retrieval head. Queries [0, n) are the examples' queries;
// with the capacity target, queries [n, n + n_k S) are the keys of the first n_k examples, each
// attending to its own key alone.
void set_retrieval_targets(AttentionTargets& t, AlignmentTarget target,
                           const AssociativeRetrievalSet& train, int n, int n_k, int S,
                           double softmax_temperature) {
  if (target == AlignmentTarget::softmax) {
    set_softmax_targets(t, softmax_temperature);
    return;
  }
  const Eigen::Index matched = static_cast<Eigen::Index>(n) * S;
  t.target = Eigen::VectorXd::Zero(matched + static_cast<Eigen::Index>(n_k) * S * S);
  for (int a = 0; a < n; ++a)  // p = 1 on the key that equals the query
    for (int j = 0; j < S; ++j)
      if (train.keys[static_cast<std::size_t>(a) * S + j] == train.query[a])
        t.target[static_cast<Eigen::Index>(a) * S + j] = 1.0;
  for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(n_k) * S; ++i)
    t.target[matched + i * S + i % S] = 1.0;  // key i of its example: p = 1 on itself
}

}  // namespace

RetrievalArm::RetrievalArm(const RecallConfig& c, const RecallVariant& v, int feature_dim,
                           const RecallArmSetting& setting, int size_index, std::uint64_t seed)
    : config_(c), variant_(v), setting_(setting), seed_(seed) {
  const RecallTaskConfig& t = c.task;
  spec_ = {t.pairs[size_index], t.key_symbols, t.value_symbols};
  RetrievalShape s;
  s.keys = retrieval_key_symbols(spec_);
  s.values = retrieval_value_symbols(spec_);
  s.pairs = spec_.pairs;
  s.embedding = t.embedding > 0 ? t.embedding : static_cast<int>(1.1 * (s.keys + s.values));
  s.key_size = c.model.d_model;
  s.attention = v.attention;
  s.feature_map = v.map;
  s.feature_map.epsilon = c.model.feature_epsilon;
  s.feature_map.key_normalisation = key_normalisation_of(v.normalisation);
  s.feature_map.qk_normalisation = v.normalisation == RecallNormalisation::qk;
  s.feature_map.bandwidth = setting.bandwidth;
  s.feature_input = v.feature_input;
  s.features = v.particles ? feature_dim : feature_dimension(v.map, 0, s.key_size);
  model_ = std::make_unique<RetrievalModel<float>>(s, c.training.batch_size);
  model_->initialise_parameters(seed);
  if (v.particles) redraw(0);
  train_ = make_associative_retrieval(spec_, t.train_examples, seed, RecallSplit::train);
  validation_ =
      make_associative_retrieval(spec_, t.validation_examples, seed, RecallSplit::validation);
  test_ = make_associative_retrieval(spec_, t.test_examples, seed, RecallSplit::test);
  const std::size_t B = c.training.batch_size, S = spec_.pairs;
  keys_.resize(B * S);
  values_.resize(B * S);
  query_.resize(B);
  target_.resize(B);
}

double RetrievalArm::train_step(const std::size_t* rows, int count, std::int64_t step) {
  if (variant_.redraw) redraw(step + 1);
  const RetrievalBatch batch = gather(train_, rows, count);
  model_->zero_gradients();
  const double loss = model_->forward(batch);
  model_->backward(batch, variant_.trainable);
  return loss;
}

std::vector<RecallHeadAlignment> RetrievalArm::phase_a(bool teacher) {
  const RecallPhaseAConfig& p = config_.phase_a;
  const int S = spec_.pairs, d = config_.model.d_model, B = config_.training.batch_size;
  const int n = std::min(p.examples, static_cast<int>(train_.query.size()));
  // The capacity target's key queries: as many pairs (n_k S²) as the matching part's (n S).
  const int n_k = setting_.target == AlignmentTarget::capacity ? (n + S - 1) / S : 0;
  // φ reads τ q and τ k, or s q̂ and s k̂ with QK normalisation (input_scale 1)
  const double scale = model_->input_scale();
  AttentionTargets t;
  t.queries.resize(n + static_cast<Eigen::Index>(n_k) * S, d);
  t.keys.resize(static_cast<Eigen::Index>(n) * S, d);
  std::vector<std::size_t> rows(B);
  for (int first = 0; first < n; first += B) {
    const int count = std::min(B, n - first);
    for (int b = 0; b < count; ++b) rows[b] = static_cast<std::size_t>(first + b);
    model_->forward(gather(train_, rows.data(), count));
    for (int b = 0; b < count; ++b) {
      const Eigen::Index a = first + b;
      t.queries.row(a) = scale * ConstVectorMap<float>(model_->query_input(b), d).cast<double>();
      t.keys.middleRows(a * S, S) =
          scale * ConstMatrixMap<float>(model_->key_inputs(b), d, S).cast<double>().transpose();
      t.key_begin.push_back(a * S);
      t.key_end.push_back((a + 1) * S);
    }
  }
  for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(n_k) * S; ++i) {
    t.queries.row(n + i) = t.keys.row(i);
    t.key_begin.push_back(i - i % S);
    t.key_end.push_back(i - i % S + S);
  }
  // The teacher's logits are k_jᵀq/√d = (τq)ᵀ(τk_j) / (τ²√d) (no teacher with QK normalisation).
  const double temperature =
      teacher ? 1.0 / (scale * scale * std::sqrt(static_cast<double>(d))) : 1.0;
  set_retrieval_targets(t, setting_.target, train_, n, n_k, S, temperature);
  return {align_head_particles(model_->particles().data(), model_->particle_rows(), d, std::move(t),
                               p, seed_, 0, config_.source,
                               key_normalisation_of(variant_.normalisation))};
}

RecallScore RetrievalArm::evaluate(RecallSplit split, bool measure_capacity) {
  const AssociativeRetrievalSet& set = split == RecallSplit::test ? test_ : validation_;
  const int B = config_.training.batch_size, n = set.size(), S = spec_.pairs;
  const int d = config_.model.d_model, D = model_->shape().features;
  const bool linear = variant_.attention == AttentionKind::linear;
  measure_capacity = measure_capacity && variant_.attention != AttentionKind::uniform;
  CapacityMeter meter;
  Eigen::MatrixXd log_gram(S, S);
  Eigen::VectorXd log_weights(S);
  std::vector<std::size_t> rows(B);
  RecallScore score;
  for (int first = 0, batch_index = 0; first < n; first += B, ++batch_index) {
    const int count = std::min(B, n - first);
    for (int b = 0; b < count; ++b) rows[b] = static_cast<std::size_t>(first + b);
    if (variant_.redraw) redraw(-(batch_index + 1));
    const RetrievalBatch batch = gather(set, rows.data(), count);
    score.loss += model_->forward(batch) * count;
    for (int b = 0; b < count; ++b) {
      score.correct.push_back(model_->prediction(b) == batch.target[b]);
      if (!measure_capacity) continue;
      const int* keys = batch.keys + static_cast<std::size_t>(b) * S;
      const int own = static_cast<int>(std::find(keys, keys + S, batch.query[b]) - keys);
      if (linear) {  // G = ΦᵀΦ, w = Φᵀφ(q)
        const Eigen::MatrixXd phi =
            ConstMatrixMap<float>(model_->key_features(b), D, S).cast<double>();
        log_gram = (phi.transpose() * phi).array().log().matrix();
        log_weights =
            (phi.transpose() * ConstVectorMap<float>(model_->query_features(b), D).cast<double>())
                .array()
                .log()
                .matrix();
      } else {  // softmax: log G = kᵀk/√d, log w = kᵀq/√d
        const Eigen::MatrixXd k =
            ConstMatrixMap<float>(model_->key_vectors(b), d, S).cast<double>();
        const double r = 1.0 / std::sqrt(static_cast<double>(d));
        log_gram = r * (k.transpose() * k);
        log_weights =
            r * (k.transpose() * ConstVectorMap<float>(model_->query_vector(b), d).cast<double>());
      }
      // φ reads τ q and τ k, or s q̂ and s k̂ with QK normalisation (scale 1)
      const bool qk = model_->shape().qk_normalised();
      const double q_norm =
          ConstVectorMap<float>(qk ? model_->query_input(b) : model_->query_vector(b), d)
              .cast<double>()
              .norm();
      const double k_norm =
          ConstMatrixMap<float>(qk ? model_->key_inputs(b) : model_->key_vectors(b), d, S)
              .col(own)
              .cast<double>()
              .norm();
      const double tau = model_->input_scale();
      meter.add(log_gram, log_weights, own,
                linear ? tau * tau * q_norm * k_norm
                       : q_norm * k_norm / std::sqrt(static_cast<double>(d)));
    }
  }
  for (bool right : score.correct) score.accuracy += right;
  score.loss /= n;
  score.accuracy /= n;
  score.capacity = meter.result();
  return score;
}

double RetrievalArm::effective_bandwidth(double particle_norm_ratio) const {
  const double tau = setting_.bandwidth;
  // QK normalisation: φ reads s q̂, s started at τ
  if (model_->shape().qk_normalised()) return std::abs(model_->qk_scale()) * particle_norm_ratio;
  const float* g = model_->feature_transform();
  switch (variant_.feature_input) {
    case FeatureInput::temperature:
      return tau * std::abs(g[0]);
    case FeatureInput::metric: {
      const int d = config_.model.d_model;
      return tau * ConstMatrixMap<float>(g, d, d).cast<double>().norm() / std::sqrt(double(d));
    }
    case FeatureInput::fixed:
      break;
  }
  return tau * particle_norm_ratio;
}

void RetrievalArm::redraw(std::int64_t draw) {
  draw_particles(model_->particles().data(), 1, model_->particle_rows(), config_.model.d_model,
                 config_.model, variant_, seed_, draw);
}

RetrievalBatch RetrievalArm::gather(const AssociativeRetrievalSet& set, const std::size_t* rows,
                                    int count) {
  const int S = spec_.pairs;
  for (int b = 0; b < count; ++b) {
    std::copy_n(set.keys.begin() + rows[b] * S, S, keys_.begin() + b * S);
    std::copy_n(set.values.begin() + rows[b] * S, S, values_.begin() + b * S);
    query_[b] = set.query[rows[b]];
    target_[b] = set.target[rows[b]];
  }
  return {keys_.data(), values_.data(), query_.data(), target_.data(), count};
}

MqarArm::MqarArm(const RecallConfig& c, const RecallVariant& v, int feature_dim,
                 const RecallArmSetting& setting, int size_index, std::uint64_t seed)
    : config_(c), variant_(v), setting_(setting), seed_(seed) {
  const RecallTaskConfig& t = c.task;
  spec_ = {t.vocabulary, t.lengths[size_index], t.pairs[size_index], t.alpha, t.random_non_queries};
  ModelShape s;
  s.vocabulary = vocabulary_size(spec_);
  s.max_length = spec_.length;
  s.d_model = c.model.d_model;
  s.heads = c.model.heads;
  s.layers = c.model.layers;
  s.d_ff = c.model.d_ff;
  s.features = feature_dim;
  s.attention = v.attention;
  s.feature_map = v.map;
  s.feature_map.epsilon = c.model.feature_epsilon;
  s.feature_map.key_normalisation = key_normalisation_of(v.normalisation);
  s.feature_map.qk_normalisation = v.normalisation == RecallNormalisation::qk;
  s.feature_map.bandwidth = setting.bandwidth;
  s.qk_tied = c.model.qk_tied;
  s.conv_kernel = c.model.short_convolution;
  s.position_embedding = c.model.position_embedding;
  s.dropout = 0.0;
  if (v.attention == AttentionKind::linear && !v.particles)
    s.features = feature_dimension(v.map, 0, s.head_size());
  const int B = c.training.batch_size;
  model_ = std::make_unique<TransformerDecoder<float>>(s, B, spec_.length, B * spec_.pairs);
  model_->initialise_parameters(seed);
  if (v.particles) redraw(0);
  train_ = make_mqar(spec_, t.train_examples, seed, RecallSplit::train);
  validation_ = make_mqar(spec_, t.validation_examples, seed, RecallSplit::validation);
  test_ = make_mqar(spec_, t.test_examples, seed, RecallSplit::test);
  tokens_.resize(static_cast<std::size_t>(B) * spec_.length);
  targets_.resize(tokens_.size());
}

double MqarArm::train_step(const std::size_t* rows, int count, std::int64_t step) {
  if (variant_.redraw) redraw(step + 1);
  const DecoderBatch batch = gather(train_, rows, count);
  model_->zero_gradients();
  const double loss = model_->forward(batch);
  model_->backward(batch, variant_.trainable);
  return loss;
}

std::vector<RecallHeadAlignment> MqarArm::phase_a(bool teacher) {
  const RecallPhaseAConfig& p = config_.phase_a;
  const ModelShape& s = model_->shape();
  const int L = spec_.length, hs = s.head_size(), B = config_.training.batch_size;
  const int n = std::min(p.examples, train_.size());
  const Eigen::Index rows_total = static_cast<Eigen::Index>(n) * L;
  const double scale = model_->feature_input_scale();
  // The teacher's logits are qᵀk/√d_head = (s q)ᵀ(s k) / τ² with s = τ d_head^{-1/4}.
  const double temperature = teacher ? 1.0 / (setting_.bandwidth * setting_.bandwidth) : 1.0;
  std::vector<RecallHeadAlignment> report;
  std::vector<std::size_t> rows(B);
  for (int l = 0; l < s.layers; ++l) {
    if (!s.attention_layer(l)) continue;  // a convolution layer has no particles to align
    std::vector<AttentionTargets> heads(s.heads);
    for (AttentionTargets& t : heads) {
      t.queries.resize(rows_total, hs);
      t.keys.resize(rows_total, hs);
      for (Eigen::Index a = 0; a < rows_total; ++a) {
        t.key_begin.push_back(a - a % L);
        t.key_end.push_back(a + 1);
      }
    }
    for (int first = 0; first < n; first += B) {
      const int count = std::min(B, n - first);
      for (int b = 0; b < count; ++b) rows[b] = static_cast<std::size_t>(first + b);
      model_->forward(gather(train_, rows.data(), count));
      const AttentionLayout layout = model_->attention_layout(count, L);
      for (int b = 0; b < count; ++b)
        for (int h = 0; h < s.heads; ++h) {
          const Eigen::Index row = static_cast<Eigen::Index>(first + b) * L;
          heads[h].queries.middleRows(row, L) =
              scale * layout.block(model_->qkv(l), b, h, 0).cast<double>().transpose();
          heads[h].keys.middleRows(row, L) =
              scale *
              layout.block(model_->qkv(l), b, h, layout.k_offset()).cast<double>().transpose();
        }
    }
    for (int h = 0; h < s.heads; ++h) {
      set_softmax_targets(heads[h], temperature);
      report.push_back(align_head_particles(
          model_->head_particles(l, h), model_->particle_rows(), hs, std::move(heads[h]), p, seed_,
          static_cast<std::uint64_t>(l * s.heads + h), config_.source,
          key_normalisation_of(variant_.normalisation)));
      report.back().layer = l;
      report.back().head = h;
    }
  }
  return report;
}

RecallScore MqarArm::evaluate(RecallSplit split, bool) {
  const MqarSet& set = split == RecallSplit::test ? test_ : validation_;
  const int B = config_.training.batch_size, n = set.size();
  std::vector<std::size_t> rows(B);
  RecallScore score;
  std::int64_t scored = 0;
  for (int first = 0, batch_index = 0; first < n; first += B, ++batch_index) {
    const int count = std::min(B, n - first);
    for (int b = 0; b < count; ++b) rows[b] = static_cast<std::size_t>(first + b);
    if (variant_.redraw) redraw(-(batch_index + 1));
    const DecoderBatch batch = gather(set, rows.data(), count);
    const double loss = model_->forward(batch);
    const int k = model_->scored();
    score.loss += loss * k;
    for (int s = 0; s < k; ++s)
      score.correct.push_back(model_->prediction(s) ==
                              batch.targets[model_->scored_positions()[s]]);
    scored += k;
  }
  for (bool right : score.correct) score.accuracy += right;
  score.loss /= static_cast<double>(scored);
  score.accuracy /= static_cast<double>(scored);
  return score;
}

double MqarArm::effective_bandwidth(double particle_norm_ratio) const {
  const ModelShape& s = model_->shape();
  if (!s.feature_map.qk_normalisation || s.attention != AttentionKind::linear)
    return setting_.bandwidth * particle_norm_ratio;
  double sum = 0.0;  // QK normalisation: the mean |s_h| over heads, started at τ
  int count = 0;
  for (int l = 0; l < s.layers; ++l) {
    if (!s.attention_layer(l)) continue;
    const ParameterTensor& t =
        model_->tensor("layers." + std::to_string(l) + ".attention.qk_scale");
    for (std::size_t i = 0; i < t.size(); ++i, ++count)
      sum += std::abs(static_cast<double>(model_->parameters()[t.offset + i]));
  }
  return sum / count * particle_norm_ratio;
}

void MqarArm::redraw(std::int64_t draw) {
  const ModelShape& s = model_->shape();
  draw_particles(model_->particles().data(), s.layers * s.heads, model_->particle_rows(),
                 s.head_size(), config_.model, variant_, seed_, draw);
}

DecoderBatch MqarArm::gather(const MqarSet& set, const std::size_t* rows, int count) {
  const int L = spec_.length;
  for (int b = 0; b < count; ++b) {
    std::copy_n(set.inputs.begin() + rows[b] * L, L, tokens_.begin() + b * L);
    std::copy_n(set.targets.begin() + rows[b] * L, L, targets_.begin() + b * L);
  }
  return {tokens_.data(), targets_.data(), count, L};
}

}  // namespace cpm

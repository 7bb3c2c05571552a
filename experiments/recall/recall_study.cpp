#include "experiments/recall/recall_study.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "core/random_stream.hpp"
#include "experiments/recall/recall_phase_a.hpp"
#include "experiments/recall/recall_report.hpp"
#include "features/feature_generator.hpp"
#include "io/input_error.hpp"
#include "io/output_directory.hpp"
#include "io/progress.hpp"
#include "io/text_file.hpp"
#include "learning/recall_tasks.hpp"
#include "transformer/adamw.hpp"
#include "transformer/retrieval_model.hpp"
#include "transformer/transformer_decoder.hpp"

namespace cpm {

namespace {

struct Score {
  double accuracy = 0.0, loss = 0.0;
  std::vector<bool> correct;  // per example or query position
};

// Particle blocks of `blocks` heads, (rows, d) row-major each, from the configured law; with
// antithetic particles (not for hedgehog, whose φ holds ±Wx already) the second half of each block
// is the negative of the first. `draw` keys the
// random stream: 0 for the particles drawn once, step + 1 for a redraw at a training step, and
// −(batch + 1) for an evaluation batch (offsets far apart, so no two draws share a stream).
void draw_particles(float* particles, int blocks, int rows, int d, const RecallModelConfig& m,
                    const FeatureMapSpec& map, std::uint64_t seed, std::int64_t draw) {
  const bool antithetic = m.antithetic && map.kind != FeatureMapKind::hedgehog;
  const int base = antithetic ? rows / 2 : rows;
  for (int h = 0; h < blocks; ++h) {
    const std::uint64_t stream_offset =
        draw >= 0 ? static_cast<std::uint64_t>(draw)
                  : (std::uint64_t{1} << 38) + static_cast<std::uint64_t>(-draw);
    const std::uint64_t replica = stream_offset * 1024 + static_cast<std::uint64_t>(h);
    const Eigen::MatrixXd w = initial_features(m.particle_init, base, d, seed, replica);
    float* block = particles + static_cast<std::size_t>(h) * rows * d;
    for (int k = 0; k < base; ++k)
      for (int a = 0; a < d; ++a) {
        block[k * d + a] = static_cast<float>(w(k, a));
        if (antithetic) block[(k + base) * d + a] = -static_cast<float>(w(k, a));
      }
  }
}

// The order of training examples in epoch `epoch`.
std::vector<std::size_t> epoch_order(std::size_t n, std::uint64_t seed, int epoch) {
  return random_permutation(
      n, RandomStream(seed, RandomPurpose::training_order, 0, static_cast<std::uint64_t>(epoch)));
}

// Associative retrieval (anchor 1): the one-layer model of transformer/retrieval_model.hpp.
class RetrievalArm {
 public:
  RetrievalArm(const RecallConfig& c, const RecallVariant& v, int feature_dim, int size_index,
               std::uint64_t seed)
      : config_(c), variant_(v), seed_(seed) {
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

  RetrievalModel<float>& model() { return *model_; }
  std::size_t train_size() const { return train_.query.size(); }

  double train_step(const std::size_t* rows, int count, std::int64_t step) {
    if (variant_.redraw) redraw(step + 1);
    const RetrievalBatch batch = gather(train_, rows, count);
    model_->zero_gradients();
    const double loss = model_->forward(batch);
    model_->backward(batch, variant_.trainable);
    return loss;
  }

  // Phase A on the queries and keys of the first phase_a.examples training examples.
  std::vector<RecallHeadAlignment> phase_a() {
    const RecallPhaseAConfig& p = config_.phase_a;
    const int S = spec_.pairs, d = config_.model.d_model, B = config_.training.batch_size;
    const int n = std::min(p.examples, static_cast<int>(train_.query.size()));
    AttentionTargets t;
    t.queries.resize(n, d);
    t.keys.resize(static_cast<Eigen::Index>(n) * S, d);
    std::vector<std::size_t> rows(B);
    for (int first = 0; first < n; first += B) {
      const int count = std::min(B, n - first);
      for (int b = 0; b < count; ++b) rows[b] = static_cast<std::size_t>(first + b);
      model_->forward(gather(train_, rows.data(), count));
      for (int b = 0; b < count; ++b) {
        const Eigen::Index a = first + b;
        t.queries.row(a) = ConstVectorMap<float>(model_->query_vector(b), d).cast<double>();
        t.keys.middleRows(a * S, S) =
            ConstMatrixMap<float>(model_->key_vectors(b), d, S).cast<double>().transpose();
        t.key_begin.push_back(a * S);
        t.key_end.push_back((a + 1) * S);
      }
    }
    if (p.target == "matching") {  // p = 1 on the key that equals the query
      t.target = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n) * S);
      for (int a = 0; a < n; ++a)
        for (int j = 0; j < S; ++j)
          if (train_.keys[static_cast<std::size_t>(a) * S + j] == train_.query[a])
            t.target[static_cast<Eigen::Index>(a) * S + j] = 1.0;
    } else {
      set_softmax_targets(t);
    }
    return {align_head_particles(model_->particles().data(), model_->particle_rows(), d,
                                 std::move(t), p, seed_, 0, config_.source)};
  }

  Score evaluate(RecallSplit split) {
    const AssociativeRetrievalSet& set = split == RecallSplit::test ? test_ : validation_;
    const int B = config_.training.batch_size, n = set.size();
    std::vector<std::size_t> rows(B);
    Score score;
    for (int first = 0, batch_index = 0; first < n; first += B, ++batch_index) {
      const int count = std::min(B, n - first);
      for (int b = 0; b < count; ++b) rows[b] = static_cast<std::size_t>(first + b);
      if (variant_.redraw) redraw(-(batch_index + 1));
      const RetrievalBatch batch = gather(set, rows.data(), count);
      score.loss += model_->forward(batch) * count;
      for (int b = 0; b < count; ++b)
        score.correct.push_back(model_->prediction(b) == batch.target[b]);
    }
    for (bool right : score.correct) score.accuracy += right;
    score.loss /= n;
    score.accuracy /= n;
    return score;
  }

 private:
  void redraw(std::int64_t draw) {
    draw_particles(model_->particles().data(), 1, model_->particle_rows(), config_.model.d_model,
                   config_.model, variant_.map, seed_, draw);
  }

  RetrievalBatch gather(const AssociativeRetrievalSet& set, const std::size_t* rows, int count) {
    const int S = spec_.pairs;
    for (int b = 0; b < count; ++b) {
      std::copy_n(set.keys.begin() + rows[b] * S, S, keys_.begin() + b * S);
      std::copy_n(set.values.begin() + rows[b] * S, S, values_.begin() + b * S);
      query_[b] = set.query[rows[b]];
      target_[b] = set.target[rows[b]];
    }
    return {keys_.data(), values_.data(), query_.data(), target_.data(), count};
  }

  const RecallConfig& config_;
  RecallVariant variant_;
  std::uint64_t seed_;
  AssociativeRetrievalSpec spec_;
  std::unique_ptr<RetrievalModel<float>> model_;
  AssociativeRetrievalSet train_, validation_, test_;
  std::vector<int> keys_, values_, query_, target_;
};

// MQAR (anchor 2): the causal decoder of transformer/transformer_decoder.hpp.
class MqarArm {
 public:
  MqarArm(const RecallConfig& c, const RecallVariant& v, int feature_dim, int size_index,
          std::uint64_t seed)
      : config_(c), variant_(v), seed_(seed) {
    const RecallTaskConfig& t = c.task;
    spec_ = {t.vocabulary, t.lengths[size_index], t.pairs[size_index], t.alpha,
             t.random_non_queries};
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
    s.qk_tied = c.model.qk_tied;
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

  TransformerDecoder<float>& model() { return *model_; }
  std::size_t train_size() const { return static_cast<std::size_t>(train_.size()); }

  double train_step(const std::size_t* rows, int count, std::int64_t step) {
    if (variant_.redraw) redraw(step + 1);
    const DecoderBatch batch = gather(train_, rows, count);
    model_->zero_gradients();
    const double loss = model_->forward(batch);
    model_->backward(batch, variant_.trainable);
    return loss;
  }

  // Phase A layer by layer (each with the queries and keys the aligned layers below produce), on
  // the first phase_a.examples training sequences: every position a query over the keys up to it.
  std::vector<RecallHeadAlignment> phase_a() {
    const RecallPhaseAConfig& p = config_.phase_a;
    const ModelShape& s = model_->shape();
    const int L = spec_.length, hs = s.head_size(), B = config_.training.batch_size;
    const int n = std::min(p.examples, train_.size());
    const Eigen::Index rows_total = static_cast<Eigen::Index>(n) * L;
    const double scale = model_->feature_input_scale();
    std::vector<RecallHeadAlignment> report;
    std::vector<std::size_t> rows(B);
    for (int l = 0; l < s.layers; ++l) {
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
        set_softmax_targets(heads[h]);
        report.push_back(align_head_particles(
            model_->head_particles(l, h), model_->particle_rows(), hs, std::move(heads[h]), p,
            seed_, static_cast<std::uint64_t>(l * s.heads + h), config_.source));
        report.back().layer = l;
        report.back().head = h;
      }
    }
    return report;
  }

  // Accuracy over the query positions, loss the mean cross-entropy there.
  Score evaluate(RecallSplit split) {
    const MqarSet& set = split == RecallSplit::test ? test_ : validation_;
    const int B = config_.training.batch_size, n = set.size();
    std::vector<std::size_t> rows(B);
    Score score;
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

 private:
  void redraw(std::int64_t draw) {
    const ModelShape& s = model_->shape();
    draw_particles(model_->particles().data(), s.layers * s.heads, model_->particle_rows(),
                   s.head_size(), config_.model, variant_.map, seed_, draw);
  }

  DecoderBatch gather(const MqarSet& set, const std::size_t* rows, int count) {
    const int L = spec_.length;
    for (int b = 0; b < count; ++b) {
      std::copy_n(set.inputs.begin() + rows[b] * L, L, tokens_.begin() + b * L);
      std::copy_n(set.targets.begin() + rows[b] * L, L, targets_.begin() + b * L);
    }
    return {tokens_.data(), targets_.data(), count, L};
  }

  const RecallConfig& config_;
  RecallVariant variant_;
  std::uint64_t seed_;
  MqarSpec spec_;
  std::unique_ptr<TransformerDecoder<float>> model_;
  MqarSet train_, validation_, test_;
  std::vector<int> tokens_, targets_;
};

// Adam(W) with the configured schedule and clipping; trainable particles take Adam steps of their
// own (same rate, no weight decay, clipped on their own). Validation every eval_every steps and at
// the end; the state with the best validation accuracy (ties: lower loss) is scored on the test
// split.
template <class Arm>
void optimise(Arm& arm, const RecallConfig& c, const RecallVariant& variant, std::uint64_t seed,
              RecallRun& run, Progress& progress) {
  const RecallTrainingConfig& t = c.training;
  auto& model = arm.model();
  AdamW<float> optimiser(model.weight_decay_mask(),
                         {t.learning_rate, 0.9, 0.999, 1e-8, t.weight_decay});
  AdamW<float> particle_optimiser(
      std::vector<unsigned char>(variant.trainable ? model.particles().size() : 0, 0),
      {t.learning_rate, 0.9, 0.999, 1e-8, 0.0});
  std::vector<float> best = model.parameters(), best_particles = model.particles();
  Score best_validation;
  best_validation.accuracy = -1.0;  // below any measured accuracy
  const std::size_t n = arm.train_size(), B = static_cast<std::size_t>(t.batch_size);
  std::vector<std::size_t> order;
  int epoch = -1;
  std::size_t next = n;
  double smoothed = 0.0;
  for (int step = 1; step <= t.steps; ++step) {
    if (next + B > n) {  // a new epoch: the remainder of the last one is dropped
      order = epoch_order(n, seed, ++epoch);
      next = 0;
    }
    const int count = static_cast<int>(std::min(B, n));
    const double loss = arm.train_step(order.data() + next, count, step);
    next += static_cast<std::size_t>(count);
    if (!std::isfinite(loss))
      throw std::runtime_error("training loss became non-finite at step " + std::to_string(step));
    smoothed = step == 1 ? loss : 0.98 * smoothed + 0.02 * loss;
    const double rate = scheduled_learning_rate(t.learning_rate, step, t.warmup_steps, t.steps,
                                                t.min_learning_rate_ratio) *
                        (t.drop_step > 0 && step > t.drop_step ? t.drop_factor : 1.0);
    clip_gradient_norm(model.gradients(), t.clip_norm);
    optimiser.step(model.parameters(), model.gradients(), rate);
    if (variant.trainable) {
      clip_gradient_norm(model.particle_gradients(), t.clip_norm);
      particle_optimiser.step(model.particles(), model.particle_gradients(), rate);
    }
    if (variant.kernel && step == c.phase_a.after_steps) {
      const std::vector<RecallHeadAlignment> heads = arm.phase_a();
      double norm = 0.0, moved = 0.0;
      for (const RecallHeadAlignment& h : heads) {
        const double share = 1.0 / static_cast<double>(heads.size());
        run.phase_a_kl_before += share * h.before;
        run.phase_a_kl_after += share * h.after;
        norm += share * h.norm;
        moved += share * h.displacement;
      }
      std::ostringstream detail;
      detail.precision(3);
      detail << "phase A: KL(target ‖ linear weights) " << run.phase_a_kl_before << " → "
             << run.phase_a_kl_after << ", particles moved " << moved << " (RMS norm " << norm
             << ")";
      progress.heartbeat(step, detail.str());
    }
    if (step % t.eval_every == 0 || step == t.steps) {
      const Score v = arm.evaluate(RecallSplit::validation);
      if (v.accuracy > best_validation.accuracy ||
          (v.accuracy == best_validation.accuracy && v.loss < best_validation.loss)) {
        best_validation = v;
        best = model.parameters();
        best_particles = model.particles();
        run.best_step = step;
      }
      std::ostringstream detail;
      detail.precision(3);
      detail << "loss " << smoothed << ", validation accuracy " << v.accuracy;
      progress.update(step, detail.str());
    } else if (progress.heartbeat_due()) {
      progress.heartbeat(step, "loss " + std::to_string(smoothed));
    }
  }
  model.parameters() = best;
  model.particles() = best_particles;  // trainable, or moved by Phase A
  run.validation_accuracy = best_validation.accuracy;
  const Score test = arm.evaluate(RecallSplit::test);
  run.accuracy = test.accuracy;
  run.loss = test.loss;
  run.correct = test.correct;
}

}  // namespace

RecallRun run_recall_arm(const RecallConfig& config, const RecallVariant& variant, int feature_dim,
                         int size_index, std::uint64_t seed, bool progress) {
  const bool mqar = config.task.dataset == "mqar";
  RecallRun run;
  run.task = config.task.dataset;
  run.variant = variant.name;
  run.seed = seed;
  run.pairs = config.task.pairs[size_index];
  run.size = mqar ? config.task.lengths[size_index] : run.pairs;
  const auto start = std::chrono::steady_clock::now();
  std::ostringstream label;
  label << run.task << ' ' << run.variant;
  if (variant.attention == AttentionKind::linear) {
    const int head_size = mqar ? config.model.d_model / config.model.heads : config.model.d_model;
    label << " D="
          << (variant.particles ? feature_dim : feature_dimension(variant.map, 0, head_size));
  }
  label << (mqar ? " L=" : " S=") << run.size << " seed " << seed;
  Progress bar(label.str(), config.training.steps, progress);
  try {
    if (mqar) {
      MqarArm arm(config, variant, feature_dim, size_index, seed);
      run.feature_dim =
          variant.attention == AttentionKind::linear ? arm.model().shape().features : 0;
      optimise(arm, config, variant, seed, run, bar);
    } else {
      RetrievalArm arm(config, variant, feature_dim, size_index, seed);
      run.feature_dim =
          variant.attention == AttentionKind::linear ? arm.model().shape().features : 0;
      optimise(arm, config, variant, seed, run, bar);
    }
  } catch (const std::invalid_argument& e) {
    throw InputError(config.source + ": " + run.variant + ": " + e.what());
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ostringstream detail;
  detail.precision(3);
  detail << "test accuracy " << run.accuracy << ", loss " << run.loss;
  bar.finish(detail.str());
  return run;
}

std::vector<RecallRun> run_recall_study(const RecallConfig& config, const RecallOptions& options) {
  const std::string& dir = config.output_directory;
  prepare_output_directory(dir, options.overwrite);
  std::vector<RecallRun> runs;
  RecallTable table(dir + "/capacity.csv");
  for (int size = 0; size < config.task.sizes(); ++size)
    for (const std::string& name : config.variants) {
      const RecallVariant variant = parse_recall_variant(name);
      // Arms whose φ has a fixed dimension (softmax, uniform, elu, dpfp) run once per size.
      const std::vector<int> dims = variant.particles ? config.model.features : std::vector<int>{0};
      for (int dim : dims)
        for (std::uint64_t seed : config.seeds) {
          runs.push_back(run_recall_arm(config, variant, dim, size, seed, options.progress));
          table.add(runs.back());  // written as it goes: a long study keeps what it finished
        }
    }
  write_recall_summary(dir + "/summary.md", runs);
  draw_recall_figure(dir + "/capacity.png", runs);
  std::cout << read_text_file(dir + "/summary.md");
  return runs;
}

}  // namespace cpm

#pragma once
// The two recall tasks as trainable arms (docs/model.md §2, "Recall tasks"): a model, its
// generated train / validation / test splits and batch buffers, with the steps the recall trainer
// (experiments/recall/recall_training.hpp) calls: train_step, phase_a, evaluate. An arm is built
// for one variant, D_φ, setting (bandwidth τ, Phase A target), size and seed.
#include <cstdint>
#include <memory>
#include <vector>

#include "config/recall_config.hpp"
#include "experiments/recall/capacity_diagnostic.hpp"
#include "experiments/recall/recall_phase_a.hpp"
#include "learning/recall_tasks.hpp"
#include "transformer/retrieval_model.hpp"
#include "transformer/transformer_decoder.hpp"

namespace cpm {

// One point of an arm's grid: the bandwidth τ of its feature map, for kernel arms Phase A's
// target (none otherwise), and the learning rate (0: [training] learning_rate).
struct RecallArmSetting {
  double bandwidth = 1.0;
  AlignmentTarget target = AlignmentTarget::none;
  double learning_rate = 0.0;
};

struct RecallScore {
  double accuracy = 0.0, loss = 0.0;
  std::vector<bool> correct;    // per example or query position, in a fixed order
  CapacityDiagnostic capacity;  // measured when asked for (associative retrieval)
};

// Associative retrieval (anchor 1): the one-layer model of transformer/retrieval_model.hpp.
class RetrievalArm {
 public:
  RetrievalArm(const RecallConfig& c, const RecallVariant& v, int feature_dim,
               const RecallArmSetting& setting, int size_index, std::uint64_t seed);

  RetrievalModel<float>& model() { return *model_; }
  std::size_t train_size() const { return train_.query.size(); }
  double train_step(const std::size_t* rows, int count, std::int64_t step);
  // Phase A on the queries and keys of the first phase_a.examples training examples (as φ reads
  // them: τ q, τ k, or s q̂, s k̂ with QK normalisation); `teacher`: the target is the softmax
  // network's own weights softmax_j(k_jᵀq/√d_key).
  std::vector<RecallHeadAlignment> phase_a(bool teacher);
  RecallScore evaluate(RecallSplit split, bool measure_capacity = false);
  // τ times what training did to the scale of φ's input: the RMS length of the particles after
  // Phase A over before (kernel arms), the learned temperature t, or √(tr(MᵀM)/d) of a metric;
  // with QK normalisation the learned |s| (started at τ) times the particles' ratio.
  double effective_bandwidth(double particle_norm_ratio) const;

 private:
  void redraw(std::int64_t draw);
  RetrievalBatch gather(const AssociativeRetrievalSet& set, const std::size_t* rows, int count);

  const RecallConfig& config_;
  RecallVariant variant_;
  RecallArmSetting setting_;
  std::uint64_t seed_;
  AssociativeRetrievalSpec spec_;
  std::unique_ptr<RetrievalModel<float>> model_;
  AssociativeRetrievalSet train_, validation_, test_;
  std::vector<int> keys_, values_, query_, target_;
};

// MQAR (anchor 2): the causal decoder of transformer/transformer_decoder.hpp.
class MqarArm {
 public:
  MqarArm(const RecallConfig& c, const RecallVariant& v, int feature_dim,
          const RecallArmSetting& setting, int size_index, std::uint64_t seed);

  TransformerDecoder<float>& model() { return *model_; }
  std::size_t train_size() const { return static_cast<std::size_t>(train_.size()); }
  double train_step(const std::size_t* rows, int count, std::int64_t step);
  // Phase A layer by layer (each with the queries and keys the aligned layers below produce), on
  // the first phase_a.examples training sequences: every position a query over the keys up to
  // it. `teacher`: the target is the softmax network's own weights (its logits' temperature).
  std::vector<RecallHeadAlignment> phase_a(bool teacher);
  // Accuracy over the query positions, loss the mean cross-entropy there.
  RecallScore evaluate(RecallSplit split, bool measure_capacity = false);
  // τ times the particles' RMS length ratio of Phase A; with QK normalisation the mean learned
  // |s_h| over the attention layers' heads (started at τ) times that ratio.
  double effective_bandwidth(double particle_norm_ratio) const;

 private:
  void redraw(std::int64_t draw);
  DecoderBatch gather(const MqarSet& set, const std::size_t* rows, int count);

  const RecallConfig& config_;
  RecallVariant variant_;
  RecallArmSetting setting_;
  std::uint64_t seed_;
  MqarSpec spec_;
  std::unique_ptr<TransformerDecoder<float>> model_;
  MqarSet train_, validation_, test_;
  std::vector<int> tokens_, targets_;
};

}  // namespace cpm

#pragma once
// The configuration of the recall study (`cpm train` with [data] dataset = "associative_retrieval"
// or "mqar"), parsed once from TOML into plain structs. Every parameter of the two anchors is a
// key; docs/model.md §2 ("Recall tasks") and the README list them.
#include <cstdint>
#include <string>
#include <vector>

#include "transformer/model_shape.hpp"

namespace cpm {

// An arm of the study: "softmax", "uniform", "elu", "dpfp1".."dpfp3", "hedgehog" (its linear map
// trained with the network), or <how>-<map> with <map> ∈ favor, porf-softplus, softmaxfeat and
// <how> ∈ vanilla (particles drawn once and kept), redraw (particles drawn anew at every training
// step and every evaluation batch, the anchor's FAVOR+), trainable (particles trained by
// back-propagation with the rest of the network).
struct RecallVariant {
  AttentionKind attention = AttentionKind::linear;
  FeatureMapSpec map;
  bool particles = false;  // the map reads particles (favor, porf-softplus, softmaxfeat, hedgehog)
  bool redraw = false;
  bool trainable = false;
  std::string name;
};
// Throws std::invalid_argument listing the valid names.
RecallVariant parse_recall_variant(const std::string& name);

struct RecallTaskConfig {
  std::string dataset = "associative_retrieval";  // associative_retrieval | mqar
  // associative_retrieval: S for each size; key and value symbols (0: S, as the anchor);
  // embedding e (0: int(1.1 (keys + values)), as the anchor).
  std::vector<int> pairs = {20, 40};
  int key_symbols = 0, value_symbols = 0, embedding = 0;
  // mqar: L for each size and the N of each L (lists of one length).
  std::vector<int> lengths;
  int vocabulary = 8192;
  double alpha = 0.01;
  bool random_non_queries = true;
  // Examples drawn for training (from the train stream), validation (model selection) and test
  // (the reported figures).
  int train_examples = 20000, validation_examples = 500, test_examples = 1000;
  int sizes() const { return static_cast<int>(pairs.size()); }
};

struct RecallModelConfig {
  int d_model = 64;                     // retrieval: d_key; mqar: the residual width
  int heads = 1, layers = 2, d_ff = 0;  // mqar only
  std::vector<int> features = {64};     // D_φ of the particle maps, one arm per entry
  bool qk_tied = false;                 // mqar only
  double feature_epsilon = 1e-6;
  std::string particle_init = "orthogonal";  // orthogonal | gaussian
  // Particles in ± pairs (ω_k and −ω_k), as the anchor's FAVOR+ with m draws and 2m features.
  bool antithetic = true;
};

struct RecallTrainingConfig {
  int steps = 2000, batch_size = 32;
  double learning_rate = 1e-3;
  int warmup_steps = 0;
  double min_learning_rate_ratio = 1.0;  // 1: a constant rate after warm-up, as the anchors
  double weight_decay = 0.0, clip_norm = 0.0;
  int eval_every = 200;  // validation every so many steps; the best state is tested
};

struct RecallConfig {
  std::string source;
  RecallTaskConfig task;
  RecallModelConfig model;
  RecallTrainingConfig training;
  std::vector<std::string> variants = {"softmax", "uniform", "vanilla-favor"};
  std::vector<std::uint64_t> seeds = {1, 2, 3};
  std::string output_directory = "out/recall";
};

// True when the configuration's [data] dataset names a recall task.
bool is_recall_config(const std::string& toml_text, const std::string& source);
RecallConfig parse_recall_config(const std::string& toml_text, const std::string& source);
RecallConfig load_recall_config(const std::string& path);

}  // namespace cpm

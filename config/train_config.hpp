#pragma once
// The configuration of `cpm train` / `cpm eval`, parsed once from TOML into plain structs.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "config/model_sections.hpp"
#include "transformer/model_shape.hpp"

namespace cpm {

// The attention variant of docs/model.md §2: "softmax", "vanilla-<map>" (fixed random particles) or
// "kernel-<map>" (particles learned in Phase A, then frozen), <map> ∈ favor, porf-softplus,
// softmaxfeat.
struct AttentionVariant {
  AttentionKind attention = AttentionKind::linear;
  FeatureMapKind map = FeatureMapKind::favor;
  bool learned_particles = true;
  std::string name() const;
};
// Throws InputError-free std::invalid_argument with the list of valid names.
AttentionVariant parse_attention_variant(const std::string& name);

struct DataConfig {
  std::string dataset = "sst2";  // sst2 | rotten_tomatoes | qqp | fashion_mnist
  std::string directory;  // default: CPM_DATA_DIR/<dataset>, or the Fashion-MNIST package folder
  std::string train_path, eval_path;  // qqp only: GLUE train.tsv and dev.tsv
  int max_length = 64;
  int min_count = 2;
  int max_vocabulary = 0;       // 0: no limit
  std::size_t train_limit = 0;  // at most this many training examples (0: all)
  std::size_t eval_limit = 0;
  std::uint64_t split_seed = 1;  // Rotten Tomatoes split
  int pixel_levels = 16;         // Fashion-MNIST grey levels
};

struct ModelConfig {
  int d_model = 64, heads = 4, layers = 2, d_ff = 128, features = 64;
  double dropout = 0.1;
  AttentionVariant variant;
  bool qk_tied = false;
  double feature_epsilon = 1e-6;
  std::string particle_init = "orthogonal";  // orthogonal | gaussian
};

struct TrainingConfig {
  int epochs = 3;
  int batch_size = 32;
  double learning_rate = 1e-3;
  int warmup_steps = 100;
  double min_learning_rate_ratio = 0.1;
  double weight_decay = 0.01;
  double clip_norm = 1.0;
  std::uint64_t seed = 1;
};

// Phase A: Langevin dynamics of each head's particles on the alignment Hamiltonian.
struct PhaseAConfig {
  int warmup_epochs = 0;  // Phase B epochs with the initial particles before Phase A
  DynamicsConfig dynamics{.step = 0.05, .steps = 50};  // [phase_a.dynamics]
  InteractionConfig interaction{.kernel = InteractionKernel::power(1.0),
                                .lambda = 0.01};  // [phase_a.interaction]
  double gamma = 0.1;                             // V_align = −γ_eff ‖m(ω)‖²
  bool relative_gamma = true;  // γ_eff = γ / (RMS initial alignment force); false: γ_eff = γ
  // D is the ball of this radius; absent: 2√d_head (twice the norm of a standard Gaussian
  // feature, so the alignment cannot drive particles away); 0: the whole space.
  std::optional<double> radius;
  std::size_t sequences = 2000;  // training sequences in the alignment
  bool centred = true;
  std::string source;  // the configuration file, for error messages
};

struct EvaluationConfig {
  bool robustness = true;
  std::uint64_t perturbation_seed = 1;
};

// An experiment repeats the whole run for every variant, seed and data set.
struct ExperimentConfig {
  std::vector<std::string> variants;  // empty: a single run
  std::vector<std::uint64_t> seeds = {1, 2, 3};
  std::vector<std::string> datasets;  // empty: data.dataset only
};

struct TrainConfig {
  std::string source;
  DataConfig data;
  ModelConfig model;
  TrainingConfig training;
  PhaseAConfig phase_a;
  EvaluationConfig evaluation;
  ExperimentConfig experiment;
  std::string output_directory = "out/train";
  bool is_experiment() const { return !experiment.variants.empty(); }
};

TrainConfig parse_train_config(const std::string& toml_text, const std::string& source);
TrainConfig load_train_config(const std::string& path);

}  // namespace cpm

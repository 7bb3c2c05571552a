#pragma once
// The configuration of `cpm train` / `cpm eval`, parsed once from TOML into plain structs.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "config/model_sections.hpp"
#include "config/training_sections.hpp"
#include "transformer/model_shape.hpp"

namespace cpm {

// The attention variant of docs/model.md §2: "softmax", "uniform" (φ ≡ 1: the mean of the values),
// "vanilla-<map>" (fixed random particles) or "kernel-<map>" (particles learned in Phase A, then
// frozen), <map> ∈ favor, porf-softplus, softmaxfeat.
struct AttentionVariant {
  AttentionKind attention = AttentionKind::linear;
  FeatureMapKind map = FeatureMapKind::favor;
  bool learned_particles = true;
  std::string name() const;
};
// Throws InputError-free std::invalid_argument with the list of valid names.
AttentionVariant parse_attention_variant(const std::string& name);

// The classification data sets ([data] dataset, [experiment] datasets).
enum class ClassificationDataset { sst2, rotten_tomatoes, qqp, fashion_mnist };
const std::vector<std::string>& names(ClassificationDataset);  // "sst2", "rotten_tomatoes", …

struct DataConfig {
  ClassificationDataset dataset = ClassificationDataset::sst2;
  std::string directory;  // default: data_folder()/<dataset>, or the Fashion-MNIST package folder
  std::string train_path, eval_path;  // qqp only: GLUE train.tsv and dev.tsv
  int max_length = 64;
  int min_count = 2;
  int max_vocabulary = 0;       // 0: no limit
  std::size_t train_limit = 0;  // at most this many training examples (0: all)
  std::size_t eval_limit = 0;
  std::uint64_t split_seed = 1;  // Rotten Tomatoes split
  int pixel_levels = 16;         // Fashion-MNIST grey levels
};

struct ModelConfig : ParticleFeatureConfig {
  int d_model = 64, heads = 4, layers = 2, d_ff = 128, features = 64;
  double dropout = 0.1;
  AttentionVariant variant;
  bool qk_tied = false;
};

struct TrainingConfig : OptimiserConfig {  // warm-up 100 steps, cosine decay to 0.1, clip 1
  int epochs = 3;
  int batch_size = 32;
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
  // The token vectors aligned on: the head's keys, or its queries and keys (with qk_tied they are
  // the same vectors, and the keys are used once).
  bool queries_and_keys = false;
  // Alignment on φ normalised per token, φ_k(x) / ((1/m) Σ_l φ_l(x)): the scale of a token's
  // features, which attention's normalisation discards for queries, does not count.
  bool normalised = false;
  // Stop rule: every `check_every` steps the alignment is compared with its value at the previous
  // check; Phase A stops when the relative change is below `tolerance`, and after
  // dynamics.steps steps in any case. tolerance = 0: exactly dynamics.steps steps.
  double tolerance = 0.0;
  int check_every = 10;
  // λ from the drifts at the start of Phase A: λ = fraction · (RMS alignment drift) / (RMS
  // repulsion drift at λ = 1), so the repulsion is this fraction of the alignment drift.
  // Absent: λ = interaction.lambda as given.
  std::optional<double> repulsion_fraction;
  // Write every head's queries, keys and particles before and after into phase_a_tokens.h5 of
  // the output folder (io/phase_a_tokens_file.hpp), for cpm.attention_phase_a to run again.
  bool write_tokens = false;
  std::string source;  // the configuration file, for error messages
};

struct EvaluationConfig {
  bool robustness = true;
  std::uint64_t perturbation_seed = 1;
};

// An experiment repeats the whole run for every variant, seed and data set.
//   protocol = "independent": every variant is trained from scratch with its own schedule.
//   protocol = "paired": per kernel-<map> variant, vanilla-<map> is trained for
//     phase_a.warmup_epochs (E) epochs and saved; from that checkpoint the kernel arm runs Phase A
//     and then training.epochs (E′) epochs, and the vanilla arm runs the same E′ epochs (same data
//     order, same number of steps). The controls "softmax" and "uniform" take the same two stages
//     without Phase A. vanilla-<map> variants are not listed: they are the paired arms.
struct ExperimentConfig {
  std::vector<std::string> variants;     // empty: a single run
  std::string protocol = "independent";  // independent | paired
  int bootstrap_samples = 2000;          // paired: resamples of the bootstrap interval
  bool keep_checkpoints = false;         // paired: keep each checkpoint.h5 after its arms ran
  std::vector<std::uint64_t> seeds = {1, 2, 3};
  std::vector<ClassificationDataset> datasets;  // empty: data.dataset only
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
  bool is_paired() const { return is_experiment() && experiment.protocol == "paired"; }
};

TrainConfig parse_train_config(const std::string& toml_text, const std::string& source);
TrainConfig load_train_config(const std::string& path);

}  // namespace cpm

#pragma once
// The configuration of the recall study (`cpm recall`: [data] dataset = "associative_retrieval"
// or "mqar"), parsed once from TOML into plain structs. Every parameter of the two anchors is a
// key; docs/model.md §2 ("Recall tasks") and docs/guide/train.md list them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/model_sections.hpp"
#include "config/training_sections.hpp"
#include "transformer/model_shape.hpp"
#include "transformer/retrieval_model.hpp"

namespace cpm {

// The two tasks ([data] dataset).
enum class RecallTask { associative_retrieval, mqar };
const std::vector<std::string>& names(RecallTask);  // "associative_retrieval", "mqar"

// What Phase A's linear attention weights align to ([phase_a] targets; none: an arm without
// Phase A, whose name is empty).
enum class AlignmentTarget { none, softmax, matching, capacity };
const std::vector<std::string>& names(AlignmentTarget);  // "", "softmax", "matching", "capacity"

// The normalisation of an arm's attention ([model] normalise_keys: a name, or a list of names with
// one arm per entry, as [model] features lists D_φ budgets): none; l2 or l1, the keys' features
// divided by their length, φ(k)/‖φ(k)‖ (transformer/key_normalisation.hpp); qk, QK normalisation:
// q and k replaced by s_h q/‖q‖ and s_h k/‖k‖ before φ, s_h one learned scale per head started at
// the run's bandwidth τ (φ's features themselves not divided). Arms without a feature map
// (softmax, uniform) run once, with none.
enum class RecallNormalisation { none, l2, l1, qk };
const std::vector<std::string>& names(RecallNormalisation);  // "none", "l2", "l1", "qk"
// The normalisation of φ(k) that `n` applies (none for qk, which acts before φ).
KeyNormalisation key_normalisation_of(RecallNormalisation n);

// An arm of the study: "softmax", "uniform", "elu", "dpfp1".."dpfp3", "hedgehog" (its linear map
// trained with the network), "taylor" (Based's second-order Taylor map behind a learned
// projection to d′, D_φ = 1 + d′ + d′(d′+1)/2 ≤ the configured D_φ), "rebased" (a ReBased-style
// control: a learned projection to d′, LayerNorm with a learned affine γ, β, then the quadratic
// map y ⊗ y with kernel ε + (yᵀy′)², D_φ = 1 + d′(d′+1)/2 ≤ the configured D_φ),
// "projected-dpfp1".."3" (dpfp of ν behind a learned projection to d′ = ⌊D_φ / 2ν⌋), or <how>-<map>
// with <map> ∈ favor, porf-softplus, softmaxfeat and <how> ∈ vanilla (particles drawn once and
// kept), redraw (particles drawn anew at every training step and every evaluation batch, the
// anchor's FAVOR+), trainable (particles trained by back-propagation with the rest of the network),
// and kernel-favor (particles drawn once, moved by Phase A after [phase_a] after_steps steps, then
// frozen). For associative retrieval also temperature-favor and metric-favor: fixed particles
// behind a learned temperature or a learned metric M (ω ~ N(0, MᵀM),
// transformer/retrieval_model.hpp). Two suffixes, in this order: ":<generator>" draws the particles
// with another generator of frequencies/feature_generator.hpp than [model] particle_init (e.g.
// "vanilla-favor:coulomb"), and
// "@softmax" starts the arm from the trained softmax network of the same seed and size (a
// teacher, as Hedgehog converts a trained softmax model): kernel arms then run Phase A on the
// teacher's attention weights before the first step.
struct RecallVariant {
  AttentionKind attention = AttentionKind::linear;
  FeatureMapSpec map;
  bool particles = false;  // the map reads particles (favor, porf-softplus, softmaxfeat, hedgehog)
  bool redraw = false;
  bool trainable = false;
  bool kernel = false;  // Phase A moves the particles once, during training
  FeatureInput feature_input = FeatureInput::fixed;
  std::string particle_init;  // empty: [model] particle_init
  bool from_softmax = false;  // started from the trained softmax network
  std::string name;
  // Set per arm by the study from [model] normalise_keys (parse_recall_variant gives none).
  RecallNormalisation normalisation = RecallNormalisation::none;
  // φ's input scale changes the map: every linear arm chooses its bandwidth but dpfp (homogeneous:
  // the attention's normalisation removes a scale), taylor and projected dpfp, whose learned
  // projection starts with unit rows and absorbs a scale (measured: the same loss to three digits
  // at four τ), and rebased, whose LayerNorm removes it. hedgehog's learned layer starts with rows
  // of length ≈ √d, whose softmax saturates at a large τ: it chooses τ too.
  bool scale_sensitive() const {
    return attention == AttentionKind::linear && map.kind != FeatureMapKind::dpfp &&
           map.kind != FeatureMapKind::taylor && map.kind != FeatureMapKind::rebased;
  }
};
// Throws std::invalid_argument listing the valid names.
RecallVariant parse_recall_variant(const std::string& name);
// Throws std::invalid_argument when the arm cannot take the normalisation: qk with a learned
// temperature or metric (temperature-, metric-favor learn their input's scale themselves) and
// with an @softmax start (the teacher's queries and keys are not normalised).
void check_recall_normalisation(const RecallVariant& arm, RecallNormalisation n);

struct RecallTaskConfig {
  RecallTask dataset = RecallTask::associative_retrieval;
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

struct RecallModelConfig : ParticleFeatureConfig {
  int d_model = 64;                     // retrieval: d_key; mqar: the residual width
  int heads = 1, layers = 2, d_ff = 0;  // mqar only
  std::vector<int> features = {64};     // D_φ of the particle maps, one arm per entry
  // [model] normalise_keys: the normalisations every arm with a feature map runs, one arm per
  // entry (a single name reads as a list of one).
  std::vector<RecallNormalisation> normalisations = {RecallNormalisation::none};
  bool qk_tied = false;  // mqar only
  // mqar only: the anchor's hybrid (a gated short causal convolution of this kernel in the even
  // layers, attention in the odd ones; 0: attention in every layer), and learned positions.
  int short_convolution = 0;
  bool position_embedding = true;
  // Particles in ± pairs (ω_k and −ω_k), as the anchor's FAVOR+ with m draws and 2m features.
  bool antithetic = true;
  // The grid of bandwidths τ (FeatureMapSpec::bandwidth) every scale-sensitive linear arm runs
  // with; the study keeps, per arm, D_φ and size, the τ with the best validation accuracy.
  std::vector<double> bandwidths = {1.0};
};

struct RecallTrainingConfig : OptimiserConfig {
  // The anchors' schedule: no warm-up, a constant rate, no weight decay, no clipping.
  RecallTrainingConfig() : OptimiserConfig{1e-3, 0, 1.0, 0.0, 0.0} {}
  int steps = 2000, batch_size = 32;
  // Every arm's rate is multiplied by drop_factor after step drop_step (0: never), e.g. at Phase
  // A's step, so that the arms of the paired protocol continue from the shared checkpoint at the
  // same fine-tuning rate.
  int drop_step = 0;
  double drop_factor = 0.1;
  int eval_every = 200;  // validation every so many steps; the best state is tested
  // The grid of learning rates every arm runs with (absent: learning_rate alone); the study keeps
  // per arm, D_φ and size the rate with the best validation accuracy, as the anchors sweep it.
  std::vector<double> learning_rates;
  // Training stops once the validation accuracy reaches this (0: never), as Zoology stops at 0.99.
  double early_stop_accuracy = 0.0;
};

// Phase A of the kernel- arms (docs/model.md §2, "Phase A for the recall tasks"). The arm trains
// like vanilla-favor for after_steps steps (so it passes through the vanilla arm's state at that
// step, the checkpoint the two arms share); then, layer by layer and head by head, the particles
// run projected dynamics on the attention-weight potential of
// experiments/recall/attention_weight_alignment.hpp over `examples` training examples, with Riesz
// repulsion; training continues with them frozen, and only states after Phase A are validated.
struct RecallPhaseAConfig {
  int after_steps = 0;  // 0: half of training.steps
  // What the linear weights align to, one kernel arm per entry (chosen on validation like τ):
  //   softmax    softmax_i(x_aᵀy_i) of the network's own queries and keys
  //   matching   p = 1 on the key that equals the query (associative_retrieval only)
  //   capacity   matching, and every key of an example attending to itself alone among the
  //              example's keys: distinct keys' features as close to orthogonal as the map allows
  //              (associative_retrieval only)
  std::vector<AlignmentTarget> targets = {AlignmentTarget::softmax};
  // Training examples whose queries and keys align; absent: 256 for associative retrieval, 8
  // sequences for MQAR (every position a query, L(L+1)/2 pairs per sequence).
  int examples = 256;
  double gamma = 1.0;            // the RMS alignment drift of the initial particles
  std::optional<double> radius;  // the ball D; absent: 2√d_head; 0: the whole space
  // [phase_a.dynamics]: by default β = ∞ and the energy minimised by projected FIRE (gradient
  // only: L-BFGS and Newton factor the pair Hessian, dense for m particles in d_head dimensions),
  // at most max_iterations iterations; Langevin with `steps` steps of size `step` on request.
  DynamicsConfig dynamics{.integrator = Integrator::minimize,
                          .step = 0.05,
                          .steps = 100,
                          .minimizer = MinimizerMethod::fire,
                          .tolerance = 1e-4,
                          .max_iterations = 200};
  // [phase_a.interaction]; absent kernel: riesz with s = d_head − 1, which spreads particles in
  // d_head dimensions (d − 2 < s < d, docs/model.md §1).
  InteractionConfig interaction;
  // λ = fraction · (RMS alignment drift) / (RMS repulsion drift at λ = 1), at the start.
  double repulsion_fraction = 0.1;
};

// An arm's own grid ([grid."<arm>"]), replacing the study-wide lists for that arm: e.g. the
// setting a pilot chose on validation, so that the full study runs only it.
// [grid."<arm>".<normalisation>] bandwidths replaces the arm's τ grid under that normalisation
// only: under "qk" φ reads s_h·q/‖q‖ with s_h started at τ, a scale of another size.
struct RecallArmGrid {
  std::optional<std::vector<double>> bandwidths, learning_rates;
  std::optional<std::vector<AlignmentTarget>> targets;
  std::map<RecallNormalisation, std::vector<double>> normalisation_bandwidths;
};

struct RecallConfig {
  std::string source;
  RecallTaskConfig task;
  RecallModelConfig model;
  RecallTrainingConfig training;
  RecallPhaseAConfig phase_a;
  std::vector<std::string> variants = {"softmax", "uniform", "vanilla-favor"};
  std::map<std::string, RecallArmGrid> arm_grids;  // by arm name
  std::vector<std::uint64_t> seeds = {1, 2, 3};
  std::string output_directory = "out/recall";
};

// D_φ of an arm with the configured D_φ budget: the budget itself for particle maps, the largest
// attainable D_φ within it for taylor, rebased and projected dpfp, the map's own D_φ for elu and
// dpfp, 0 for softmax and uniform. Throws std::invalid_argument when nothing fits.
int recall_feature_dim(const RecallVariant& variant, int budget, int head_size);

// The normalisations an arm runs with: [model] normalise_keys for the linear arms, none alone for
// softmax and uniform (no features to normalise).
std::vector<RecallNormalisation> recall_normalisations(const RecallConfig& c,
                                                       const RecallVariant& arm);

// The learning rates an arm runs with: its own grid's, else [training] learning_rates.
const std::vector<double>& recall_learning_rates(const RecallConfig& c, const std::string& arm);

// The τ grid of arm `name` under `normalisation`: its [grid] entry for the normalisation, else
// the arm's bandwidths, else [model] bandwidths.
std::vector<double> recall_bandwidths(const RecallConfig& c, const std::string& name,
                                      RecallNormalisation normalisation);

RecallConfig parse_recall_config(const std::string& toml_text, const std::string& source);
RecallConfig load_recall_config(const std::string& path);

}  // namespace cpm

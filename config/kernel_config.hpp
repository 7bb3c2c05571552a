#pragma once
// The configuration of `cpm kernel`, parsed once from TOML into plain structs
// (docs/guide/kernel.md).
#include <Eigen/Dense>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "config/model_sections.hpp"
#include "physics/alignment.hpp"
#include "physics/random_feature_maps.hpp"

namespace cpm {

struct KernelDataConfig {
  std::string task = "variance";   // variance | radial | subspace | mixture | fashion_mnist | idx
  int dim = 2;                     // synthetic tasks
  Eigen::Index train_size = 1000;  // synthetic: sizes; image data: subsample (0 = all)
  Eigen::Index test_size = 1000;
  std::vector<double> label_noise = {0.0};  // one study per level
  double tau = 0.5;                         // variance task
  double radius = 0.0;                      // radial, subspace tasks (0: median norm)
  int relevant = 2;                         // subspace task: the coordinates the label depends on
  int components = 8, classes = 2;          // mixture task
  double separation = 2.0, width = 0.5;     // mixture task
  std::string directory = "/usr/share/datasets/fashion-mnist";       // fashion_mnist
  std::string train_images, train_labels, test_images, test_labels;  // idx
  bool standardise = false;  // z-score every input coordinate with the training statistics
  double scale = 1.0;        // then multiply the inputs by this factor (the inverse bandwidth)
};

struct KernelFeaturesConfig {
  FeatureMapKind map = FeatureMapKind::rff;
  bool pairs = false;  // map = "rff-pairs": the phase-free cos/sin pairs (kind rff)
  std::vector<Eigen::Index> n = {16, 32, 64, 128, 256, 512};  // feature budgets N
  // The learned particles' start: orthogonal | gaussian (i.i.d.) | sobol | halton | coulomb
  // (frequencies/feature_generator.hpp), scaled by `scale`.
  std::string init = "orthogonal";
  double scale = 1.0;  // ω ~ N(0, scale² I)
  // The configuration name of the map: "rff-pairs" or feature_map_name(map).
  std::string map_name() const { return pairs ? "rff-pairs" : feature_map_name(map); }
};

// The feature map of a budget N: rff phases keyed by (seed, replica) as in
// FeatureMap::with_random_phases; the cos/sin pairs have none.
FeatureMap make_feature_map(const KernelFeaturesConfig& features, Eigen::Index n,
                            std::uint64_t seed, std::uint64_t replica = 0);

struct KernelAlignmentConfig {
  double gamma = 1.0;
  bool centred = true;
  Eigen::Index batch_size = 0;  // 0: the whole training set
  AlignmentObjective objective = AlignmentObjective::alignment;
  double alpha = 1.0;          // squared_loss: the target kernel's scale
  bool anchor = true;          // prior anchor |ω|²/(2σ²β) at finite β
  bool relative_gamma = true;  // γ in units of the initial RMS alignment drift
};

// [repulsion] beyond the keys of [interaction].
struct KernelRepulsionConfig {
  // ≥ 0: λ set per run so that the RMS repulsive drift at the initial particles is this
  // fraction of the RMS alignment drift (then `lambda` may not be given); < 0: `lambda` as given.
  double drift_fraction = -1.0;
};

// [selection]: the validation split and the grids chosen on it (per method and N).
struct KernelSelectionConfig {
  double validation_fraction = 0.2;  // of the training rows
  std::vector<double> gamma;         // default: {alignment.gamma}
  std::vector<double> beta;          // default: {dynamics.beta}
  std::vector<double> l2;            // default: {classifier.l2}
  std::vector<int> checkpoints;      // learning steps evaluated (early stopping); default {steps}
};

// [dynamics] beyond the shared keys (config/model_sections.hpp, counted in steps).
struct KernelLearningConfig {
  double radius = std::numeric_limits<double>::infinity();  // particles stay in this ball
  int record_every = 10;                                    // diagnostics interval (steps)
};

struct KernelClassifierConfig {
  std::string kind = "logistic";  // logistic | ridge
  double l2 = 1e-3;
  int max_iterations = 300;
};

struct KernelBaselinesConfig {
  // Any of kernel_method_names().
  std::vector<std::string> methods = {"iid", "orthogonal", "importance", "learned-no-repulsion",
                                      "learned"};
  Eigen::Index pool = 4096;  // importance sampling: candidate pool size
  double rho = 1.0;          // importance sampling: χ²-divergence bound
};

struct KernelConfig {
  std::string source;
  KernelDataConfig data;
  KernelFeaturesConfig features;
  KernelAlignmentConfig alignment;
  InteractionConfig repulsion{.kernel = InteractionKernel::power(1.0)};  // [repulsion]
  KernelRepulsionConfig repulsion_scale;
  DynamicsConfig dynamics{.step = 0.05, .steps = 200};  // [dynamics]
  KernelLearningConfig learning;
  KernelClassifierConfig classifier;
  KernelBaselinesConfig baselines;
  KernelSelectionConfig selection;
  std::uint64_t seed = 1;
  int seeds = 1;  // repetitions with seeds seed, seed+1, …
  std::string output_directory = "out/kernel";
};

// iid, orthogonal, importance (fixed or resampled prior draws); learned (the [dynamics] β grid,
// anchored), learned-beta-inf (β = ∞, no noise, no anchor), learned-no-repulsion (λ = 0),
// learned-null (learned's chosen settings on permuted training labels).
const std::vector<std::string>& kernel_method_names();

KernelConfig parse_kernel_config(const std::string& toml_text, const std::string& source);
KernelConfig load_kernel_config(const std::string& path);

}  // namespace cpm

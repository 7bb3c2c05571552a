#pragma once
// The configuration of `cpm kernel`, parsed once from TOML into plain structs (README: cpm kernel).
#include <Eigen/Dense>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "config/model_sections.hpp"
#include "physics/feature_maps.hpp"

namespace cpm {

struct KernelDataConfig {
  std::string task = "variance";   // variance | radial | mixture | fashion_mnist | idx
  int dim = 2;                     // synthetic tasks
  Eigen::Index train_size = 1000;  // synthetic: sizes; image data: subsample (0 = all)
  Eigen::Index test_size = 1000;
  std::vector<double> label_noise = {0.0};                           // one study per level
  double tau = 0.5;                                                  // variance task
  double radius = 0.0;                                               // radial task (0: median norm)
  int components = 8, classes = 2;                                   // mixture task
  double separation = 2.0, width = 0.5;                              // mixture task
  std::string directory = "/usr/share/datasets/fashion-mnist";       // fashion_mnist
  std::string train_images, train_labels, test_images, test_labels;  // idx
  bool standardise = false;  // z-score every input coordinate with the training statistics
  double scale = 1.0;        // then multiply the inputs by this factor (the inverse bandwidth)
};

struct KernelFeaturesConfig {
  FeatureMapKind map = FeatureMapKind::rff;
  std::vector<Eigen::Index> n = {16, 32, 64, 128, 256, 512};  // feature budgets N
  std::string init = "orthogonal";                            // orthogonal | gaussian
  double scale = 1.0;                                         // ω ~ N(0, scale² I)
};

struct KernelAlignmentConfig {
  double gamma = 1.0;
  bool centred = true;
  Eigen::Index batch_size = 0;  // 0: the whole training set
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
  // Any of: iid, orthogonal, importance, learned-no-repulsion, learned.
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
  DynamicsConfig dynamics{.step = 0.05, .steps = 200};                   // [dynamics]
  KernelLearningConfig learning;
  KernelClassifierConfig classifier;
  KernelBaselinesConfig baselines;
  std::uint64_t seed = 1;
  int seeds = 1;  // repetitions with seeds seed, seed+1, …
  std::string output_directory = "out/kernel";
};

const std::vector<std::string>& kernel_method_names();

KernelConfig parse_kernel_config(const std::string& toml_text, const std::string& source);
KernelConfig load_kernel_config(const std::string& path);

}  // namespace cpm

#pragma once
// The configuration of `cpm features` (docs/guide/features.md): which frequency generators
// (frequencies/feature_generator.hpp) approximate the Gaussian kernel, in which dimensions and at
// which feature counts, on which points.
#include <Eigen/Dense>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "frequencies/feature_generator.hpp"

namespace cpm {

struct FeaturesStudyConfig {
  std::vector<FeatureMethod> methods = {FeatureMethod::iid, FeatureMethod::orthogonal,
                                        FeatureMethod::sobol, FeatureMethod::halton,
                                        FeatureMethod::coulomb};
  std::vector<int> dims = {2, 4, 8};
  std::vector<Eigen::Index> ns = {16, 64, 256};
  int seeds = 3;
  std::uint64_t seed = 1;
  double sigma = 1.0;  // k(x, y) = exp(−σ²|x − y|²/2): p = N(0, σ² I)
  // `kernel`: the Gaussian kernel above or the Laplace kernel exp(−σ|x − y|) (p: multivariate
  // Cauchy; coulomb needs s > −1 there)
  SpectralLaw law = SpectralLaw::gaussian;
  int bootstrap = 1000;
  double confidence = 0.95;

  // The points (experiments/frequencies/approximation_points.hpp): `gaussian` or `fashion_mnist`
  // (the test images in image_directory, projected to d dimensions), scaled so that
  // σ²|x − y|²/2 ≈ scale² whatever d: `count` points report the errors, `selection_count` others
  // choose the coulomb setting.
  std::string point_source = "gaussian";
  std::string image_directory = "/usr/share/datasets/fashion-mnist";
  Eigen::Index points = 256;
  Eigen::Index selection_points = 256;
  double point_scale = 1.0;

  // The coulomb candidates: the exponents `s` (0: the log kernel) and, with `newtonian`, s = d − 2
  // in each d; one RepulsionSettings per candidate, the kernel set per d. Default s = −1 (the
  // energy distance), −0.5 for the Laplace kernel, whose law has no mean (s > −1).
  std::vector<double> exponents = {-1.0};
  bool newtonian = false;
  RepulsionSettings repulsion;

  std::string output_directory = "out/features";
  std::string source;  // the configuration file, named by a checkpoint's restart hint
};

// `cpm concentration` (docs/features.md §5): replicas of the kernel's relative Frobenius
// error on fixed points, for i.i.d. features and the finite-β compensated gas, at several N.
// The gas's β is fixed (`betas`) or grows with N (`betas_per_particle`: β_N = b·N, the regime of
// speed N²).
struct KernelConcentrationConfig {
  // dims = {d}, sigma, seed, the [points] settings and the gas's RepulsionSettings (one kernel,
  // finite β) in the shape `cpm features` uses them.
  FeaturesStudyConfig features;
  std::vector<FeatureMethod> methods = {FeatureMethod::iid, FeatureMethod::coulomb};
  std::vector<Eigen::Index> ns;
  int replicas = 1000;
  std::vector<double> betas;
  std::vector<double> betas_per_particle;
  std::vector<double> deltas;
  double confidence = 0.95;
  int bootstrap = 1000;
  std::string source;  // the configuration file, named by a checkpoint's restart hint
};

KernelConcentrationConfig parse_kernel_concentration_config(const std::string& toml_text,
                                                            const std::string& source);
KernelConcentrationConfig load_kernel_concentration_config(const std::string& path);

FeaturesStudyConfig parse_features_config(const std::string& toml_text, const std::string& source);
FeaturesStudyConfig load_features_config(const std::string& path);

// The coulomb candidates' kernels in d dimensions: each exponent with s < d (0 the log kernel,
// −1 the linear one), then s = d − 2 with `newtonian` when not already there (and the law
// allows it).
std::vector<InteractionKernel> coulomb_candidates(const FeaturesStudyConfig& config, int d);
// The Riesz exponent of a candidate's kernel (the inverse of that map): 0 log, −1 linear, else s.
double riesz_exponent(const InteractionKernel& kernel);

}  // namespace cpm

#pragma once
// The data of a `cpm kernel` study: a synthetic task generated in code, Fashion-MNIST from
// Debian's dataset-fashion-mnist, or any pair of IDX image/label files. Image files are read
// once; each (label noise, seed) then draws its own subsample, noise and standardisation.
#include <cstdint>

#include "config/kernel_config.hpp"
#include "io/idx_reader.hpp"
#include "learning/labelled_data.hpp"

namespace cpm {

class KernelDataSource {
 public:
  // Reads image data; throws InputError naming the file for missing or corrupt files and for
  // label files that do not match their images.
  explicit KernelDataSource(const KernelDataConfig& config);

  // Train and test sets for one label-noise level and seed: rows subsampled (image data),
  // training labels corrupted, inputs standardised (if configured) and scaled.
  DataSplit split(double label_noise, std::uint64_t seed) const;

  int dim() const;
  int classes() const { return classes_; }

 private:
  KernelDataConfig config_;
  IdxArray train_images_, test_images_;
  Eigen::VectorXi train_labels_, test_labels_;
  int classes_ = 2;
};

}  // namespace cpm

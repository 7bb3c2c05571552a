#include "experiments/kernel/kernel_datasets.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/random_stream.hpp"
#include "io/input_error.hpp"
#include "learning/synthetic_tasks.hpp"

namespace cpm {

namespace {

bool is_image_task(const KernelDataConfig& c) {
  return c.task == "fashion_mnist" || c.task == "idx";
}

void read_pair(const std::string& images_path, const std::string& labels_path, IdxArray& images,
               Eigen::VectorXi& labels) {
  images = read_idx(images_path);
  if (images.shape.size() < 2) throw InputError(images_path + ": expected an IDX array of images");
  labels = idx_labels(read_idx(labels_path), labels_path);
  if (labels.size() != images.shape[0])
    throw InputError(labels_path + ": " + std::to_string(labels.size()) +
                     " labels do not match the " + std::to_string(images.shape[0]) + " rows of " +
                     images_path);
}

// Rows of an image array: all of them, or `count` drawn without replacement.
LabelledData subsample(const IdxArray& images, const Eigen::VectorXi& labels, Eigen::Index count,
                       int classes, std::uint64_t seed, std::uint64_t replica) {
  const Eigen::Index n = images.shape[0];
  const Eigen::Index per_row =
      static_cast<Eigen::Index>(images.data.size()) / std::max<Eigen::Index>(n, 1);
  const Eigen::Index take = count == 0 ? n : std::min(count, n);
  std::vector<std::size_t> rows(static_cast<std::size_t>(n));
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  if (take < n) {
    RandomStream s(seed, RandomPurpose::image_subsample, replica, 0);
    shuffle_prefix(rows, static_cast<std::size_t>(take), s);
  }
  LabelledData d;
  d.classes = classes;
  d.x.resize(take, per_row);
  d.y.resize(take);
  for (Eigen::Index r = 0; r < take; ++r) {
    const auto i = static_cast<Eigen::Index>(rows[r]);
    for (Eigen::Index j = 0; j < per_row; ++j) d.x(r, j) = images.data[i * per_row + j] / 255.0;
    d.y[r] = labels[i];
  }
  return d;
}

}  // namespace

KernelDataSource::KernelDataSource(const KernelDataConfig& config) : config_(config) {
  if (!is_image_task(config_)) {
    classes_ = config_.task == "mixture" ? config_.classes : 2;
    return;
  }
  std::string tri = config_.train_images, trl = config_.train_labels, tei = config_.test_images,
              tel = config_.test_labels;
  if (config_.task == "fashion_mnist") {
    const std::string dir = config_.directory + "/";
    tri = dir + "train-images-idx3-ubyte.gz";
    trl = dir + "train-labels-idx1-ubyte.gz";
    tei = dir + "t10k-images-idx3-ubyte.gz";
    tel = dir + "t10k-labels-idx1-ubyte.gz";
  }
  read_pair(tri, trl, train_images_, train_labels_);
  read_pair(tei, tel, test_images_, test_labels_);
  const auto row_size = [](const IdxArray& a) {
    return a.data.size() / std::max<std::size_t>(a.shape[0], 1);
  };
  if (row_size(train_images_) != row_size(test_images_))
    throw InputError(tei + ": test images differ in size from the training images in " + tri);
  const int max_label = std::max(train_labels_.size() ? train_labels_.maxCoeff() : 0,
                                 test_labels_.size() ? test_labels_.maxCoeff() : 0);
  classes_ = std::max(2, max_label + 1);
  if (train_labels_.size() < 2) throw InputError(trl + ": needs at least two training rows");
}

int KernelDataSource::dim() const {
  if (!is_image_task(config_)) return config_.dim;
  return static_cast<int>(train_images_.data.size() /
                          std::max<std::int64_t>(train_images_.shape[0], 1));
}

DataSplit KernelDataSource::split(double label_noise, std::uint64_t seed) const {
  DataSplit split;
  if (is_image_task(config_)) {
    split.train = subsample(train_images_, train_labels_, config_.train_size, classes_, seed, 0);
    split.test = subsample(test_images_, test_labels_, config_.test_size, classes_, seed, 1);
    apply_label_noise(split.train.y, classes_, label_noise, seed);
  } else {
    SyntheticTask t;
    t.kind = synthetic_task_kind(config_.task);
    t.dim = config_.dim;
    t.train_size = config_.train_size;
    t.test_size = config_.test_size;
    t.tau = config_.tau;
    t.radius = config_.radius;
    t.relevant = config_.relevant;
    t.components = config_.components;
    t.classes = config_.classes;
    t.separation = config_.separation;
    t.width = config_.width;
    t.label_noise = label_noise;
    split = make_synthetic_task(t, seed);
  }
  if (config_.standardise) {
    const Eigen::RowVectorXd mean = split.train.x.colwise().mean();
    Eigen::RowVectorXd sd = ((split.train.x.rowwise() - mean).colwise().squaredNorm() /
                             static_cast<double>(split.train.size()))
                                .cwiseSqrt();
    sd = sd.unaryExpr([](double v) { return v > 1e-12 ? v : 1.0; });  // constant pixels stay 0
    for (LabelledData* d : {&split.train, &split.test}) {
      d->x.rowwise() -= mean;
      d->x.array().rowwise() /= sd.array();
    }
  }
  if (config_.scale != 1.0) {
    split.train.x *= config_.scale;
    split.test.x *= config_.scale;
  }
  return split;
}

}  // namespace cpm

#pragma once
// Classification tasks generated in code, for the kernel-learning benchmark:
//  * variance: two classes of centred Gaussians differing only in variance,
//              x | y=1 ~ N(0, (1+τ) I),  x | y=0 ~ N(0, (1−τ) I)  (no linear classifier on x
//              works);
//  * radial:   x ~ N(0, I), y = 1 if ‖x‖ > r (default r: the median norm, so classes balance);
//  * subspace: the radial task on the first k coordinates only, y = 1 if ‖(x_1..x_k)‖ > r: the
//              isotropic prior of the frequencies is wrong, only k of d directions matter;
//  * mixture:  K Gaussian clusters N(c_j, w² I) with centres c_j ~ N(0, s² I), cluster j carrying
//              label j mod C (an XOR-like multi-modal task; C ≥ 2 classes).
// Label noise replaces the labels of a fraction p of the training rows (exactly round(p n) rows,
// chosen at random) by a different class drawn uniformly; the test set stays clean, so the
// test metrics measure how well a method ignores the noise.
#include <cstdint>
#include <string>

#include "learning/labelled_data.hpp"

namespace cpm {

struct SyntheticTask {
  enum class Kind { variance, radial, subspace, mixture };
  Kind kind = Kind::variance;
  int dim = 2;
  Eigen::Index train_size = 1000, test_size = 1000;
  double tau = 0.5;         // variance task, 0 < τ < 1
  double radius = 0.0;      // radial, subspace; 0 means the median of the norm (Wilson–Hilferty)
  int relevant = 2;         // subspace task: the k coordinates the label depends on
  int components = 8;       // mixture task
  int classes = 2;          // mixture task
  double separation = 2.0;  // mixture: standard deviation s of the cluster centres
  double width = 0.5;       // mixture: standard deviation w within a cluster
  double label_noise = 0.0;
};

SyntheticTask::Kind synthetic_task_kind(
    const std::string& name);  // std::invalid_argument if unknown

// Train and test sets of the task; everything is drawn from streams keyed by seed.
DataSplit make_synthetic_task(const SyntheticTask& task, std::uint64_t seed);

// Replaces the labels of round(fraction·n) distinct rows by a different class; returns how many.
Eigen::Index apply_label_noise(Eigen::VectorXi& labels, int classes, double fraction,
                               std::uint64_t seed);

}  // namespace cpm

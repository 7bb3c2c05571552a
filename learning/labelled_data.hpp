#pragma once
// A labelled data set for classification: rows of x are the inputs, y holds class labels
// in 0..classes−1.
#include <Eigen/Dense>

namespace cpm {

struct LabelledData {
  Eigen::MatrixXd x;  // (n, d)
  Eigen::VectorXi y;  // (n)
  int classes = 2;
  Eigen::Index size() const { return x.rows(); }
  Eigen::Index dim() const { return x.cols(); }
};

struct DataSplit {
  LabelledData train, test;
};

}  // namespace cpm

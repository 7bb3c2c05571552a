#pragma once
// Held-out rows and feature diagnostics for model selection:
//  * a validation split of the training rows (keyed by the seed; the test rows are never
//    involved), on which hyper-parameters are chosen;
//  * a seeded permutation of labels, for permuted-label null experiments;
//  * the effective rank of a feature matrix, exp of the entropy of its normalised singular
//    values (O. Roy, M. Vetterli, EUSIPCO 2007): N for N equal singular values, 1 for rank one.
#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "learning/labelled_data.hpp"

namespace cpm {

struct ValidationSplit {
  LabelledData fit, validation;
  std::vector<Eigen::Index> validation_rows;  // rows of the training set held out, ascending
};

// Holds out round(fraction · n) rows of `train` (at least one, at most n − 2), drawn without
// replacement from the stream keyed by (seed, validation_split); the other rows keep their order.
ValidationSplit split_validation(const LabelledData& train, double fraction, std::uint64_t seed);

// The labels in a seeded random order (stream keyed by (seed, label_permutation)).
Eigen::VectorXi permute_labels(const Eigen::VectorXi& labels, std::uint64_t seed);

// exp(−Σ_i p_i log p_i), p_i = s_i / Σ_j s_j over the singular values s of `features`; 0 for a
// zero matrix. Computed from the eigenvalues of the smaller Gram matrix.
double effective_rank(const Eigen::MatrixXd& features);

}  // namespace cpm

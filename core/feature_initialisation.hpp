#pragma once
// Initial particles for random features (docs/model.md §2): i.i.d. Gaussian rows, or
// block-orthogonal Gaussian rows (Yu et al., "Orthogonal random features", 2016): each block of d
// rows is an orthonormal frame drawn from the Haar measure, and each row is rescaled by an
// independent χ_d-distributed norm, so every row has the N(0, σ² I) marginal while rows within a
// block are exactly orthogonal. The random numbers of block b / particle k come from their own
// stream keyed by (seed, replica, index), independent of the thread count.
#include <Eigen/Dense>
#include <cstdint>

namespace cpm {

// (n, d) matrix with i.i.d. N(0, scale²) entries.
Eigen::MatrixXd gaussian_features(Eigen::Index n, Eigen::Index d, double scale, std::uint64_t seed,
                                  std::uint64_t replica = 0);

// (n, d) matrix whose consecutive blocks of d rows (the last one possibly partial) are
// orthogonal, with row norms scale·χ_d.
Eigen::MatrixXd orthogonal_gaussian_features(Eigen::Index n, Eigen::Index d, double scale,
                                             std::uint64_t seed, std::uint64_t replica = 0);

}  // namespace cpm

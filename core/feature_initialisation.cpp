#include "core/feature_initialisation.hpp"

#include <algorithm>
#include <cmath>

#include "core/random_stream.hpp"

namespace cpm {

Eigen::MatrixXd gaussian_features(Eigen::Index n, Eigen::Index d, double scale, std::uint64_t seed,
                                  std::uint64_t replica) {
  Eigen::MatrixXd w(n, d);
#pragma omp parallel for schedule(static) if (n * d > 4096)
  for (Eigen::Index k = 0; k < n; ++k) {
    RandomStream s(seed, RandomPurpose::initial_positions, replica, static_cast<std::uint64_t>(k));
    for (Eigen::Index a = 0; a < d; ++a) w(k, a) = scale * s.normal();
  }
  return w;
}

Eigen::MatrixXd orthogonal_gaussian_features(Eigen::Index n, Eigen::Index d, double scale,
                                             std::uint64_t seed, std::uint64_t replica) {
  Eigen::MatrixXd w(n, d);
  const Eigen::Index blocks = (n + d - 1) / d;
#pragma omp parallel for schedule(dynamic) if (blocks > 1)
  for (Eigen::Index b = 0; b < blocks; ++b) {
    // Stream of block b: a d×d Gaussian matrix, then the d row norms.
    RandomStream s(seed, RandomPurpose::initial_positions, replica, static_cast<std::uint64_t>(b));
    Eigen::MatrixXd g(d, d);
    for (Eigen::Index j = 0; j < d; ++j)
      for (Eigen::Index i = 0; i < d; ++i) g(i, j) = s.normal();
    // Haar-distributed orthogonal Q: QR of a Gaussian matrix with the signs of diag(R) fixed.
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
    Eigen::MatrixXd q = qr.householderQ();
    const Eigen::MatrixXd& r = qr.matrixQR();
    for (Eigen::Index j = 0; j < d; ++j)
      if (r(j, j) < 0.0) q.col(j) = -q.col(j);
    const Eigen::Index rows = std::min(d, n - b * d);
    for (Eigen::Index j = 0; j < rows; ++j) {
      double chi2 = 0.0;  // χ_d² as a sum of d squared normals
      for (Eigen::Index a = 0; a < d; ++a) {
        const double v = s.normal();
        chi2 += v * v;
      }
      w.row(b * d + j) = (scale * std::sqrt(chi2)) * q.col(j).transpose();
    }
  }
  return w;
}

}  // namespace cpm

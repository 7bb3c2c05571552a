#include "solvers/near_field_preconditioner.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/SparseCore>
#include <algorithm>
#include <array>
#include <limits>
#include <numeric>

namespace cpm {

namespace {

// |B| and B for a pair block of a radial kernel: B = h [q ẑẑᵀ r²/(r² + e²) − I] has the
// eigenvector ẑ = z/|z| (eigenvalue ẑᵀBẑ) and, orthogonal to it, one eigenvalue (tr B −
// ẑᵀBẑ)/(d−1).
Eigen::MatrixXd absolute_pair_block(const Eigen::MatrixXd& b, const Eigen::VectorXd& z) {
  const Eigen::Index d = z.size();
  const Eigen::VectorXd unit = z / z.norm();
  const double radial = unit.dot(b * unit);
  const double transverse = (b.trace() - radial) / static_cast<double>(d - 1);
  const Eigen::MatrixXd along = unit * unit.transpose();
  return std::abs(radial) * along +
         std::abs(transverse) * (Eigen::MatrixXd::Identity(d, d) - along);
}

Eigen::MatrixXd positive_part(const Eigen::MatrixXd& m) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(m);
  return eigen.eigenvectors() * eigen.eigenvalues().cwiseMax(0.0).asDiagonal() *
         eigen.eigenvectors().transpose();
}

}  // namespace

void NearFieldPreconditioner::find_pairs(const Eigen::MatrixXd& x) {
  const Eigen::Index n = x.rows();
  const int k_near = static_cast<int>(std::min<Eigen::Index>(kNeighbours, n - 1));
  // A sweep in the order of the first coordinate: from particle k outwards on both sides, until
  // the gap in that coordinate alone exceeds the k_near-th smallest distance found.
  std::vector<Eigen::Index> order(n);
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  std::sort(order.begin(), order.end(),
            [&](Eigen::Index a, Eigen::Index b) { return x(a, 0) < x(b, 0); });
  std::vector<Eigen::Index> nearest(static_cast<std::size_t>(n * k_near));
#pragma omp parallel for schedule(static)
  for (Eigen::Index i = 0; i < n; ++i) {
    const Eigen::Index k = order[i];
    // The k_near smallest squared distances so far, in increasing order.
    std::array<double, kNeighbours> distance;
    std::array<Eigen::Index, kNeighbours> index;
    distance.fill(std::numeric_limits<double>::infinity());
    const auto consider = [&](Eigen::Index l) {
      const double r2 = (x.row(k) - x.row(l)).squaredNorm();
      if (!(r2 < distance[k_near - 1])) return;
      int p = k_near - 1;
      for (; p > 0 && distance[p - 1] > r2; --p) {
        distance[p] = distance[p - 1];
        index[p] = index[p - 1];
      }
      distance[p] = r2;
      index[p] = l;
    };
    const auto beyond = [&](Eigen::Index l) {
      const double gap = x(l, 0) - x(k, 0);
      return gap * gap > distance[k_near - 1];
    };
    for (Eigen::Index j = i + 1; j < n && !beyond(order[j]); ++j) consider(order[j]);
    for (Eigen::Index j = i - 1; j >= 0 && !beyond(order[j]); --j) consider(order[j]);
    for (int p = 0; p < k_near; ++p) nearest[k * k_near + p] = index[p];
  }
  pairs_.clear();
  pairs_.reserve(nearest.size());
  for (Eigen::Index k = 0; k < n; ++k)
    for (int p = 0; p < k_near; ++p) {
      const Eigen::Index l = nearest[k * k_near + p];
      pairs_.emplace_back(std::min(k, l), std::max(k, l));
    }
  std::sort(pairs_.begin(), pairs_.end());
  pairs_.erase(std::unique(pairs_.begin(), pairs_.end()), pairs_.end());
}

bool NearFieldPreconditioner::factor(const Eigen::MatrixXd& x, const Eigen::MatrixXd& blocks,
                                     const PairHessian& pair, double weight,
                                     const ActiveConstraints& active, double shift) {
  const Eigen::Index n = x.rows(), d = x.cols();
  projections_.resize(n);
  for (Eigen::Index k = 0; k < n; ++k) projections_[k] = active.allowed(k, d);
  // Diagonal blocks: J_kk with the near pairs' signed blocks taken out (the far field), and the
  // near pairs' absolute blocks put in.
  std::vector<Eigen::MatrixXd> near(n, Eigen::MatrixXd::Zero(d, d));
  std::vector<Eigen::MatrixXd> absolute(n, Eigen::MatrixXd::Zero(d, d));
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(pairs_.size() * 2 * d * d + n * d * d);
  Eigen::VectorXd z(d);
  for (const auto& [k, l] : pairs_) {
    z = (x.row(k) - x.row(l)).transpose();
    const Eigen::MatrixXd b = weight * pair.pair(z);
    const Eigen::MatrixXd a = absolute_pair_block(b, z);
    near[k] += b;
    near[l] += b;
    absolute[k] += a;
    absolute[l] += a;
    const Eigen::MatrixXd coupling = -(projections_[k] * a * projections_[l]);
    for (Eigen::Index i = 0; i < d; ++i)
      for (Eigen::Index j = 0; j < d; ++j) {
        if (coupling(i, j) == 0.0) continue;
        entries.emplace_back(k * d + i, l * d + j, coupling(i, j));
        entries.emplace_back(l * d + j, k * d + i, coupling(i, j));
      }
  }
  Eigen::MatrixXd diagonal(d, d);
  double largest = 0.0;
  std::vector<Eigen::MatrixXd> diagonals(n);
  for (Eigen::Index k = 0; k < n; ++k) {
    for (Eigen::Index a = 0; a < d; ++a)
      for (Eigen::Index b = 0; b < d; ++b) diagonal(a, b) = blocks(k, a * d + b);
    diagonals[k] = absolute[k] + positive_part(diagonal - near[k]);
    diagonals[k].diagonal().array() += shift;
    diagonals[k] += active.curvature(k) * projections_[k];
    largest = std::max(largest, diagonals[k].diagonal().maxCoeff());
  }
  // A floor against the null space of translations (no field, no wall yet).
  const double floor = std::max(1e-12 * largest, std::numeric_limits<double>::min());
  for (Eigen::Index k = 0; k < n; ++k) {
    const Eigen::MatrixXd& p = projections_[k];
    Eigen::MatrixXd m = p * diagonals[k] * p;
    m.diagonal().array() += floor;
    m += Eigen::MatrixXd::Identity(d, d) - p;  // the forbidden motions: identity
    for (Eigen::Index i = 0; i < d; ++i)
      for (Eigen::Index j = 0; j < d; ++j)
        if (m(i, j) != 0.0) entries.emplace_back(k * d + i, k * d + j, m(i, j));
  }
  Eigen::SparseMatrix<double> matrix(n * d, n * d);
  matrix.setFromTriplets(entries.begin(), entries.end());
  factorization_.compute(matrix);
  return factorization_.info() == Eigen::Success;
}

void NearFieldPreconditioner::solve(const Eigen::MatrixXd& r, Eigen::MatrixXd& z) const {
  const Eigen::Index n = r.rows(), d = r.cols();
  rhs_.resize(n * d);
  for (Eigen::Index k = 0; k < n; ++k)
    rhs_.segment(k * d, d) = projections_[k] * r.row(k).transpose();
  solution_ = factorization_.solve(rhs_);
  z.resize(n, d);
  for (Eigen::Index k = 0; k < n; ++k)
    z.row(k) = (projections_[k] * solution_.segment(k * d, d)).transpose();
}

}  // namespace cpm

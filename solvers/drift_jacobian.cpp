#include "solvers/drift_jacobian.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace cpm {

namespace {

double infinity_norm(const Eigen::MatrixXd& m) {
  return m.size() == 0 ? 0.0 : m.cwiseAbs().maxCoeff();
}

}  // namespace

DriftJacobian::DriftJacobian(ForceField& forces, Domain domain, std::unique_ptr<PairHessian> pair)
    : forces_(forces), active_(std::move(domain)), pair_(std::move(pair)) {
  const ExternalPotential& v = forces_.potential();
  if (const auto* q = dynamic_cast<const QuadraticPotential*>(&v))
    potential_strength_ = q->strength();
  else if (!dynamic_cast<const ZeroPotential*>(&v))
    general_potential_ = true;
}

void DriftJacobian::linearise(const Eigen::MatrixXd& x, const Eigen::MatrixXd& drift,
                              const Eigen::MatrixXd& gradient) {
  x_ = x;
  drift_ = drift;
  active_.update(x, gradient);
  const Eigen::Index n = x.rows(), d = x.cols();
  const double weight = forces_.lambda() / static_cast<double>(n);
  blocks_.setZero(n, d * d);
  if (pair_ && forces_.lambda() != 0.0) {
    pair_->diagonal_blocks(x, blocks_);
    blocks_ *= weight;
  }
  potential_blocks(blocks_);
  prepared_shift_ = -1.0;

  near_field_ = (d == 2 || d == 3) && pair_ && forces_.lambda() != 0.0 && n > 1;
  if (near_field_) near_field_preconditioner_.find_pairs(x);

  // 1D: the band of J over sorted neighbours, when it is diagonally dominant.
  banded_ = false;
  if (d == 1 && pair_ && n > 1) {
    order_.resize(n);
    std::iota(order_.begin(), order_.end(), Eigen::Index{0});
    std::sort(order_.begin(), order_.end(),
              [&](Eigen::Index a, Eigen::Index b) { return x(a, 0) < x(b, 0); });
    band_.setZero(n, kBand);
    Eigen::VectorXd z(1);
    if (forces_.lambda() != 0.0)
      for (Eigen::Index i = 0; i < n; ++i)
        for (Eigen::Index j = 0; j < kBand && i + 1 + j < n; ++j) {
          const Eigen::Index a = order_[i], b = order_[i + 1 + j];
          if (active_.active(a) || active_.active(b)) continue;
          z[0] = x(a, 0) - x(b, 0);
          band_(i, j) = -weight * pair_->pair(z)(0, 0);
        }
    Eigen::VectorXd off = Eigen::VectorXd::Zero(n);
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index j = 0; j < kBand && i + 1 + j < n; ++j) {
        off[i] += std::abs(band_(i, j));
        off[i + 1 + j] += std::abs(band_(i, j));
      }
    banded_ = true;
    for (Eigen::Index i = 0; i < n && banded_; ++i) {
      const Eigen::Index k = order_[i];
      if (!active_.active(k) && !(off[i] <= blocks_(k, 0) * (1.0 + 1e-12))) banded_ = false;
    }
  }
}

void DriftJacobian::potential_blocks(Eigen::MatrixXd& blocks) {
  const Eigen::Index d = x_.cols();
  if (potential_strength_ != 0.0)
    for (Eigen::Index a = 0; a < d; ++a) blocks.col(a * d + a).array() += potential_strength_;
  if (!general_potential_) return;
  // ∇V acts particle by particle: moving every particle along e_a gives column a of each block.
  const double eps = 1e-5 * std::max(1.0, infinity_norm(x_));
  Eigen::MatrixXd plus, minus;
  for (Eigen::Index a = 0; a < d; ++a) {
    work_ = x_;
    work_.col(a).array() += eps;
    forces_.potential().evaluate(work_, values_, &plus);
    work_.col(a).array() -= 2.0 * eps;
    forces_.potential().evaluate(work_, values_, &minus);
    for (Eigen::Index b = 0; b < d; ++b)
      blocks.col(b * d + a) += (plus.col(b) - minus.col(b)) / (2.0 * eps);
  }
}

void DriftJacobian::potential_apply(const Eigen::MatrixXd& v, Eigen::MatrixXd& out) {
  if (potential_strength_ != 0.0) out += potential_strength_ * v;
  if (!general_potential_) return;
  const double scale = infinity_norm(v);
  if (scale == 0.0) return;
  const double eps = 1e-5 * std::max(1.0, infinity_norm(x_)) / scale;
  Eigen::MatrixXd plus, minus;
  work2_ = x_ + eps * v;
  forces_.potential().evaluate(work2_, values_, &plus);
  work2_ = x_ - eps * v;
  forces_.potential().evaluate(work2_, values_, &minus);
  out += (plus - minus) / (2.0 * eps);
}

void DriftJacobian::apply(const Eigen::MatrixXd& v, Eigen::MatrixXd& out, double shift) {
  ++products_;
  work_ = v;
  active_.restrict(work_);
  const Eigen::Index n = x_.rows();
  if (pair_) {
    if (forces_.lambda() != 0.0) {
      pair_->apply(x_, work_, out);
      out *= forces_.lambda() / static_cast<double>(n);
    } else {
      out.setZero(x_.rows(), x_.cols());
    }
    potential_apply(work_, out);
  } else {
    // One-sided difference at the step that balances truncation and rounding.
    const double scale = infinity_norm(work_);
    if (scale == 0.0) {
      out.setZero(x_.rows(), x_.cols());
    } else {
      const double eps =
          std::sqrt(std::numeric_limits<double>::epsilon()) * (1.0 + infinity_norm(x_)) / scale;
      work2_ = x_ + eps * work_;
      forces_.compute(work2_, out, nullptr);
      out = (out - drift_) / eps;
    }
  }
  if (shift != 0.0) out += shift * work_;
  if (active_.domain().kind() == Domain::Kind::ball && active_.count() > 0)
    for (Eigen::Index k = 0; k < n; ++k)
      if (active_.active(k)) out.row(k) += active_.curvature(k) * work_.row(k);
  active_.restrict(out);
}

void DriftJacobian::prepare_preconditioner(double shift) {
  if (shift == prepared_shift_) return;
  prepared_shift_ = shift;
  const Eigen::Index n = x_.rows(), d = x_.cols();
  if (banded_) {
    // LDLᵀ of the band (a diagonally dominant M-matrix, so the pivots stay positive):
    // D_i = A_ii − Σ_k L_ik² D_k,  L_mi = (A_mi − Σ_k L_mk L_ik D_k) / D_i, k < i within the band.
    band_factor_.setZero(n, kBand);
    band_pivots_.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const Eigen::Index k = order_[i];
      double pivot = active_.active(k) ? 1.0 : blocks_(k, 0) + shift;
      for (Eigen::Index p = std::max<Eigen::Index>(0, i - kBand); p < i; ++p) {
        const double l = band_factor_(p, i - p - 1);
        pivot -= l * l * band_pivots_[p];
      }
      band_pivots_[i] = std::max(pivot, std::numeric_limits<double>::min());
      for (Eigen::Index m = i + 1; m <= std::min(n - 1, i + kBand); ++m) {
        double value = band_(i, m - i - 1);
        for (Eigen::Index p = std::max<Eigen::Index>(0, m - kBand); p < i; ++p)
          value -= band_factor_(p, m - p - 1) * band_factor_(p, i - p - 1) * band_pivots_[p];
        band_factor_(i, m - i - 1) = value / band_pivots_[i];
      }
    }
    return;
  }
  if (near_field_) {
    const double weight = forces_.lambda() / static_cast<double>(n);
    if (near_field_preconditioner_.factor(x_, blocks_, *pair_, weight, active_, shift)) return;
    near_field_ = false;  // not positive definite to rounding: block Jacobi instead
  }
  inverse_blocks_.resize(n, d * d);
  const double largest = infinity_norm(blocks_);
  const double floor = std::max({shift, 1e-12 * largest, std::numeric_limits<double>::min()});
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(d, d);
  Eigen::MatrixXd m(d, d), tangent(d, d);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen;
  for (Eigen::Index k = 0; k < n; ++k) {
    for (Eigen::Index a = 0; a < d; ++a)
      for (Eigen::Index b = 0; b < d; ++b) m(a, b) = blocks_(k, a * d + b);
    m.diagonal().array() += shift;
    tangent = active_.allowed(k, d);
    // Held: the block on the allowed motions with the wall's curvature, identity on the others.
    if (active_.active(k))
      m = tangent * (m + active_.curvature(k) * tangent) * tangent + (identity - tangent);
    Eigen::MatrixXd inverse(d, d);
    if (d == 1) {
      inverse(0, 0) = 1.0 / std::max(std::abs(m(0, 0)), floor);
    } else {
      eigen.compute(m);
      const Eigen::VectorXd lambda = eigen.eigenvalues().cwiseAbs().cwiseMax(floor);
      inverse = eigen.eigenvectors() * lambda.cwiseInverse().asDiagonal() *
                eigen.eigenvectors().transpose();
    }
    inverse = tangent * inverse * tangent;
    for (Eigen::Index a = 0; a < d; ++a)
      for (Eigen::Index b = 0; b < d; ++b) inverse_blocks_(k, a * d + b) = inverse(a, b);
  }
}

void DriftJacobian::precondition(const Eigen::MatrixXd& r, Eigen::MatrixXd& z, double shift) {
  prepare_preconditioner(shift);
  const Eigen::Index n = x_.rows(), d = x_.cols();
  z.resize(n, d);
  if (banded_) {
    // L y = r, then Lᵀ z = D⁻¹ y, in sorted order (held particles receive zero).
    for (Eigen::Index i = 0; i < n; ++i) {
      double value = active_.active(order_[i]) ? 0.0 : r(order_[i], 0);
      for (Eigen::Index p = std::max<Eigen::Index>(0, i - kBand); p < i; ++p)
        value -= band_factor_(p, i - p - 1) * z(order_[p], 0);
      z(order_[i], 0) = value;
    }
    for (Eigen::Index i = n - 1; i >= 0; --i) {
      double value = z(order_[i], 0) / band_pivots_[i];
      for (Eigen::Index m = i + 1; m <= std::min(n - 1, i + kBand); ++m)
        value -= band_factor_(i, m - i - 1) * z(order_[m], 0);
      z(order_[i], 0) = value;
    }
    return;
  }
  if (near_field_) {
    near_field_preconditioner_.solve(r, z);
    return;
  }
  for (Eigen::Index k = 0; k < n; ++k)
    for (Eigen::Index a = 0; a < d; ++a) {
      double value = 0.0;
      for (Eigen::Index b = 0; b < d; ++b) value += inverse_blocks_(k, a * d + b) * r(k, b);
      z(k, a) = value;
    }
}

}  // namespace cpm

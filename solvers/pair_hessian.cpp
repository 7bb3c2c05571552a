#include "solvers/pair_hessian.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include "solvers/blocked_pair_sum.hpp"
#include "solvers/simd_pair_evaluators.hpp"
#include "solvers/tile_schedule.hpp"

namespace cpm {

namespace {

using Index = Eigen::Index;
constexpr Index kLanes = SimdDouble::size;

// ∇²W(z) = h(r²) [q z zᵀ / (r² + e²) − I] (see the header).
struct HessianShape {
  double q, e2;
};

HessianShape shape_of(const InteractionKernel& k) {
  using K = InteractionKernel::Kind;
  switch (k.kind) {
    case K::power:
      return {k.s + 2.0, 0.0};
    case K::log:
      return {2.0, 0.0};
    case K::linear:
      return {1.0, 0.0};
    case K::mollified:
      return {k.s + 2.0, k.epsilon * k.epsilon};
    case K::quadratic:
      return {0.0, 0.0};
    case K::absolute:
      return {1.0, 0.0};
    case K::none:
      return {0.0, 0.0};
  }
  throw std::invalid_argument("unknown interaction kernel");
}

// Coordinate a of particle k is x[a * stride + k] (likewise v); output c of particle k is
// out[c * stride + k]. Entries from n up to stride are padding (zero, masked out).
struct Layout {
  const double* x;
  const double* v;
  double* out;
  Index stride, n;
};

// The number of distinct entries of a symmetric d × d block, and the (a, b) of entry u.
constexpr int block_entries(int d) {
  return d * (d + 1) / 2;
}

// One tile's rows, for d = D (1, 2 or 3). Diagonal = false: the Hessian applied to v, row i
// receiving H(x_i − x_j)(v_i − v_j) and row j the opposite; Diagonal = true: the distinct entries
// of H(x_i − x_j), added to both rows (H is even in z).
template <int D, bool Diagonal, class Evaluator>
class TileRows {
  static constexpr int kOut = Diagonal ? block_entries(D) : D;

 public:
  TileRows(const Evaluator& w, HessianShape shape, const Layout& p) : w_(w), q_(shape.q), p_(p) {}

  void row(Index i, Index lo, Index hi) {
    for (int a = 0; a < D; ++a) {
      xi_[a] = SimdDouble(p_.x[a * p_.stride + i]);
      if constexpr (!Diagonal) vi_[a] = SimdDouble(p_.v[a * p_.stride + i]);
    }
    for (int c = 0; c < kOut; ++c) acc_[c] = SimdDouble(0.0);
    Index j = lo / kLanes * kLanes;
    if (j < lo) {
      step<true>(j, lo, hi);
      j += kLanes;
    }
    for (; j + kLanes <= hi; j += kLanes) step<false>(j, lo, hi);
    if (j < hi) step<true>(j, lo, hi);
    for (int c = 0; c < kOut; ++c) p_.out[c * p_.stride + i] += xsimd::hadd(acc_[c]);
  }

 private:
  template <bool Masked>
  void step(Index j, Index lo, Index hi) {
    std::array<SimdDouble, D> dz;
    SimdDouble r2(0.0);
    for (int a = 0; a < D; ++a) {
      dz[a] = xi_[a] - SimdDouble::load_aligned(p_.x + a * p_.stride + j);
      r2 = xsimd::fma(dz[a], dz[a], r2);
    }
    const SimdHessianFactors factors = hessian_factors(w_, r2);
    SimdDouble h = factors.minus_factor;
    SimdDouble ratio = SimdDouble(q_) * factors.over_r2;
    if constexpr (Masked) {
      // Lanes outside [lo, hi) (the pair with itself among them) may hold inf or NaN: zero both.
      const SimdMask inside = lanes_in_range(double(j), double(lo), double(hi));
      h = xsimd::select(inside, h, SimdDouble(0.0));
      ratio = xsimd::select(inside, ratio, SimdDouble(0.0));
    }
    if constexpr (Diagonal) {
      int c = 0;
      for (int a = 0; a < D; ++a)
        for (int b = a; b < D; ++b, ++c) {
          SimdDouble entry = ratio * dz[a] * dz[b];
          if (a == b) entry -= h;
          acc_[c] += entry;
          double* oj = p_.out + c * p_.stride + j;
          (SimdDouble::load_aligned(oj) + entry).store_aligned(oj);
        }
    } else {
      std::array<SimdDouble, D> dv;
      SimdDouble dot(0.0);
      for (int a = 0; a < D; ++a) {
        dv[a] = vi_[a] - SimdDouble::load_aligned(p_.v + a * p_.stride + j);
        dot = xsimd::fma(dz[a], dv[a], dot);
      }
      const SimdDouble t = ratio * dot;
      for (int a = 0; a < D; ++a) {
        const SimdDouble out = fms(t, dz[a], h * dv[a]);  // t dz − h dv
        acc_[a] += out;
        double* oj = p_.out + a * p_.stride + j;
        (SimdDouble::load_aligned(oj) - out).store_aligned(oj);
      }
    }
  }

  const Evaluator w_;
  const double q_;
  const Layout p_;
  std::array<SimdDouble, D> xi_, vi_;
  std::array<SimdDouble, kOut> acc_;
};

template <int D, bool Diagonal, class Evaluator>
void interact_tile(const Evaluator& w, HessianShape shape, const Layout& p, Index block,
                   Tile tile) {
  TileRows<D, Diagonal, Evaluator> rows(w, shape, p);
  const Index i_begin = tile.first_block * block, i_end = std::min(i_begin + block, p.n);
  const Index j_begin = tile.second_block * block, j_end = std::min(j_begin + block, p.n);
  const bool diagonal = tile.first_block == tile.second_block;
  for (Index i = i_begin; i < i_end; ++i) rows.row(i, diagonal ? i + 1 : j_begin, j_end);
}

template <class Evaluator>
class BlockedPairHessian final : public PairHessian {
 public:
  BlockedPairHessian(Evaluator w, const InteractionKernel& kernel)
      : w_(w), kernel_(kernel), shape_(shape_of(kernel)) {}

  void apply(const Eigen::MatrixXd& x, const Eigen::MatrixXd& v, Eigen::MatrixXd& out) override {
    const int d = static_cast<int>(x.cols());
    if (out.rows() != x.rows() || out.cols() != x.cols()) out.resize(x.rows(), x.cols());
    if (d > 3) return generic_apply(x, v, out);
    prepare(x, d, d);
    const Index n = x.rows(), stride = layout_.stride;
    for (int a = 0; a < d; ++a) {
      std::copy_n(v.col(a).data(), n, velocities_.begin() + a * stride);
      std::fill(velocities_.begin() + a * stride + n, velocities_.begin() + (a + 1) * stride, 0.0);
    }
    if (d == 1) run<1, false>();
    if (d == 2) run<2, false>();
    if (d == 3) run<3, false>();
    for (int a = 0; a < d; ++a) std::copy_n(outputs_.begin() + a * stride, n, out.col(a).data());
  }

  void diagonal_blocks(const Eigen::MatrixXd& x, Eigen::MatrixXd& blocks) override {
    const int d = static_cast<int>(x.cols());
    const Index n = x.rows();
    blocks.setZero(n, d * d);
    if (d > 3) return generic_diagonal(x, blocks);
    prepare(x, d, block_entries(d));
    if (d == 1) run<1, true>();
    if (d == 2) run<2, true>();
    if (d == 3) run<3, true>();
    const Index stride = layout_.stride;
    int c = 0;
    for (int a = 0; a < d; ++a)
      for (int b = a; b < d; ++b, ++c)
        for (Index k = 0; k < n; ++k) {
          blocks(k, a * d + b) = outputs_[c * stride + k];
          blocks(k, b * d + a) = outputs_[c * stride + k];
        }
  }

  Eigen::MatrixXd pair(const Eigen::VectorXd& z) const override {
    return visit(kernel_, [&](const auto& scalar) {
      const double r2 = z.squaredNorm();
      const double h = -scalar.gradient_factor(r2);
      Eigen::MatrixXd m = (shape_.q * h / (r2 + shape_.e2)) * z * z.transpose();
      m.diagonal().array() -= h;
      return m;
    });
  }

 private:
  // Copies x into the padded buffers, clears `outputs` output arrays, sizes the schedule.
  void prepare(const Eigen::MatrixXd& x, int d, int outputs) {
    const Index n = x.rows();
    if (n != n_ || d != d_) {
      block_ = pair_sum_block_size(n);
      const int blocks = static_cast<int>((n + block_ - 1) / block_);
      schedule_ = TileSchedule(blocks);
      stride_ = blocks * block_;
      positions_.assign(static_cast<std::size_t>(stride_ * d), 0.0);
      velocities_.assign(positions_.size(), 0.0);
      n_ = n;
      d_ = d;
    }
    outputs_.assign(static_cast<std::size_t>(stride_ * outputs), 0.0);
    for (int a = 0; a < d; ++a) {
      std::copy_n(x.col(a).data(), n, positions_.begin() + a * stride_);
      std::fill(positions_.begin() + a * stride_ + n, positions_.begin() + (a + 1) * stride_, 0.0);
    }
    layout_ = {positions_.data(), velocities_.data(), outputs_.data(), stride_, n};
  }

  // The tiles as OpenMP tasks in schedule order (TileSchedule::run_as_tasks, as in the pair
  // sum): every block receives its contributions in an order fixed by n alone.
  template <int D, bool Diagonal>
  void run() {
    schedule_.run_as_tasks(layout_.n >= kPairLoopParallelParticles, [this](const Tile& tile) {
      interact_tile<D, Diagonal>(w_, shape_, layout_, block_, tile);
    });
  }

  // d > 3: the plain loop over rows (each row in a fixed order), no SIMD.
  void generic_apply(const Eigen::MatrixXd& x, const Eigen::MatrixXd& v, Eigen::MatrixXd& out) {
    const Index n = x.rows();
    visit(kernel_, [&](const auto& scalar) {
#pragma omp parallel for schedule(static) if (n >= kPairLoopParallelParticles)
      for (Index k = 0; k < n; ++k) {
        Eigen::VectorXd acc = Eigen::VectorXd::Zero(x.cols());
        for (Index l = 0; l < n; ++l) {
          if (l == k) continue;
          const Eigen::VectorXd z = (x.row(k) - x.row(l)).transpose();
          const Eigen::VectorXd dv = (v.row(k) - v.row(l)).transpose();
          const double r2 = z.squaredNorm();
          const double h = -scalar.gradient_factor(r2);
          acc += (shape_.q * h / (r2 + shape_.e2) * z.dot(dv)) * z - h * dv;
        }
        out.row(k) = acc.transpose();
      }
    });
  }

  void generic_diagonal(const Eigen::MatrixXd& x, Eigen::MatrixXd& blocks) {
    const Index n = x.rows(), d = x.cols();
#pragma omp parallel for schedule(static) if (n >= kPairLoopParallelParticles)
    for (Index k = 0; k < n; ++k) {
      Eigen::MatrixXd acc = Eigen::MatrixXd::Zero(d, d);
      for (Index l = 0; l < n; ++l)
        if (l != k) acc += pair((x.row(k) - x.row(l)).transpose());
      for (Index a = 0; a < d; ++a)
        for (Index b = 0; b < d; ++b) blocks(k, a * d + b) = acc(a, b);
    }
  }

  const Evaluator w_;
  const InteractionKernel kernel_;
  const HessianShape shape_;
  Index n_ = -1, block_ = 0, stride_ = 0;
  int d_ = 0;
  TileSchedule schedule_{1};
  AlignedDoubles positions_, velocities_, outputs_;
  Layout layout_{nullptr, nullptr, nullptr, 0, 0};
};

}  // namespace

std::unique_ptr<PairHessian> make_pair_hessian(const InteractionKernel& kernel) {
  return visit_simd(kernel, [&](auto w) -> std::unique_ptr<PairHessian> {
    return std::make_unique<BlockedPairHessian<decltype(w)>>(w, kernel);
  });
}

}  // namespace cpm

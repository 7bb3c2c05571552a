#include "solvers/blocked_pair_sum.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <vector>

#include "parallel/thread_governor.hpp"
#include "solvers/simd_pair_evaluators.hpp"
#include "solvers/tile_schedule.hpp"

namespace cpm {

long pair_sum_block_size(long n) {
  constexpr long lanes = SimdDouble::size;
  const long target = (n / 16 + lanes - 1) / lanes * lanes;  // about 16 blocks
  return std::clamp(target, 8 * lanes, 64 * lanes);
}

namespace {

using Index = Eigen::Index;
constexpr Index kLanes = SimdDouble::size;

// Coordinate a of particle k is positions[a * stride + k]; likewise for the gradient. Entries
// from n up to stride are padding, never counted (masked out).
struct PaddedParticles {
  const double* positions;
  double* gradient;
  Index stride, n;
  int dim;
  const double* x(int a) const { return positions + a * stride; }
  double* g(int a) const { return gradient + a * stride; }
};

// One register per coordinate: fixed-size for d = 1, 2, 3 (D > 0), so the compiler keeps them
// in registers; a view of per-thread scratch for the generic loop (D = 0).
template <int D>
class PerCoordinate {
 public:
  explicit PerCoordinate(SimdDouble*) {}
  SimdDouble& operator[](int a) { return v_[a]; }

 private:
  std::array<SimdDouble, D> v_;
};
template <>
class PerCoordinate<0> {
 public:
  explicit PerCoordinate(SimdDouble* scratch) : v_(scratch) {}
  SimdDouble& operator[](int a) { return v_[a]; }

 private:
  SimdDouble* v_;
};

// The pair loop, written once. row(i, lo, hi) adds, for every j in [lo, hi) (all j > i),
// ∇W(x_i − x_j) to row i and ∇W(x_j − x_i) = −∇W(x_i − x_j) to row j, and returns
// Σ_j W(x_i − x_j) when Energy is set.
template <int D, bool Energy, class Evaluator>
class TileRows {
 public:
  TileRows(const Evaluator& w, const PaddedParticles& p, SimdDouble* scratch)
      : w_(w),
        p_(p),
        d_(D > 0 ? D : p.dim),
        xi_(scratch),
        acc_(scratch + d_),
        dz_(scratch + 2 * d_) {}

  double row(Index i, Index lo, Index hi) {
    for (int a = 0; a < dims(); ++a) {
      xi_[a] = SimdDouble(p_.x(a)[i]);
      acc_[a] = SimdDouble(0.0);
    }
    energy_ = SimdDouble(0.0);
    Index j = lo / kLanes * kLanes;  // registers start at multiples of the width (aligned)
    if (j < lo) {
      step<true>(j, lo, hi);
      j += kLanes;
    }
    for (; j + kLanes <= hi; j += kLanes) step<false>(j, lo, hi);
    if (j < hi) step<true>(j, lo, hi);
    for (int a = 0; a < dims(); ++a) p_.g(a)[i] += xsimd::hadd(acc_[a]);
    return Energy ? xsimd::hadd(energy_) : 0.0;
  }

 private:
  // Lanes outside [lo, hi) get h and value zero; their (unchanged) gradient entries are
  // rewritten, which is safe: they belong to the same block (j ≤ i) or to the padding.
  template <bool Masked>
  void step(Index j, Index lo, Index hi) {
    dz_[0] = xi_[0] - SimdDouble::load_aligned(p_.x(0) + j);
    SimdDouble r2 = dz_[0] * dz_[0];
    for (int a = 1; a < dims(); ++a) {
      dz_[a] = xi_[a] - SimdDouble::load_aligned(p_.x(a) + j);
      r2 = xsimd::fma(dz_[a], dz_[a], r2);
    }
    SimdPairTerms t = w_.template evaluate<Energy>(r2);
    if constexpr (Masked) {
      const SimdMask inside = lanes_in_range(double(j), double(lo), double(hi));
      t.minus_factor = xsimd::select(inside, t.minus_factor, SimdDouble(0.0));
      if constexpr (Energy) t.value = xsimd::select(inside, t.value, SimdDouble(0.0));
    }
    // ∇W(x_i − x_j) = −h dz goes to row i, +h dz to row j.
    for (int a = 0; a < dims(); ++a) {
      acc_[a] = fnma(t.minus_factor, dz_[a], acc_[a]);
      double* gj = p_.g(a) + j;
      xsimd::fma(t.minus_factor, dz_[a], SimdDouble::load_aligned(gj)).store_aligned(gj);
    }
    if constexpr (Energy) energy_ += t.value;
  }

  const Evaluator w_;
  const PaddedParticles p_;
  // The dimension, a compile-time constant in the specialised loops (so they unroll).
  int dims() const {
    if constexpr (D > 0) return D;
    return d_;
  }

  const int d_;
  PerCoordinate<D> xi_, acc_, dz_;
  SimdDouble energy_;
};

// Block I against block J (I < J), or the upper triangle of block I (I = J). Returns Σ W over
// the tile's unordered pairs (zero without Energy).
template <int D, bool Energy, class Evaluator>
double interact_tile(const Evaluator& w, const PaddedParticles& p, Index block, Tile tile,
                     SimdDouble* scratch) {
  TileRows<D, Energy, Evaluator> rows(w, p, scratch);
  const Index i_begin = tile.first_block * block, i_end = std::min(i_begin + block, p.n);
  const Index j_begin = tile.second_block * block, j_end = std::min(j_begin + block, p.n);
  const bool diagonal = tile.first_block == tile.second_block;
  double energy = 0.0;
  for (Index i = i_begin; i < i_end; ++i) energy += rows.row(i, diagonal ? i + 1 : j_begin, j_end);
  return energy;
}

template <class Evaluator>
class BlockedPairSum final : public InteractionSum {
 public:
  explicit BlockedPairSum(Evaluator w) : w_(w) {}

  void compute(const Eigen::MatrixXd& x, Eigen::MatrixXd& gradient, double* pair_energy) override {
    prepare(x.rows(), static_cast<int>(x.cols()));
    const Index n = x.rows(), stride = layout_.stride;
    double* positions = buffer_.data();
    for (int a = 0; a < layout_.dim; ++a) {
      std::copy_n(x.col(a).data(), n, positions + a * stride);
      std::fill(positions + a * stride + n, positions + (a + 1) * stride, 0.0);
    }
    std::fill_n(layout_.gradient, layout_.dim * stride, 0.0);
    std::fill(block_energy_.begin(), block_energy_.end(), 0.0);

    const bool energy = pair_energy != nullptr;
    switch (layout_.dim) {
      case 1:
        energy ? run<1, true>() : run<1, false>();
        break;
      case 2:
        energy ? run<2, true>() : run<2, false>();
        break;
      case 3:
        energy ? run<3, true>() : run<3, false>();
        break;
      default:
        energy ? run<0, true>() : run<0, false>();
        break;
    }

    for (int a = 0; a < layout_.dim; ++a) std::copy_n(layout_.g(a), n, gradient.col(a).data());
    if (energy) {
      double unordered = 0.0;
      for (double e : block_energy_) unordered += e;
      *pair_energy = 2.0 * unordered;  // Σ_{k≠l} counts each unordered pair twice
    }
  }

  std::string name() const override { return "direct"; }

 private:
  // Sizes the buffers and the schedule for (n, d); does nothing when they already fit.
  //
  // The generic loop reads the d coordinate rows of a particle at once and adds to its d gradient
  // rows. Rows a multiple of 4 KiB apart would fall in the same cache sets (and alias in the store
  // buffer), as many as 2d of them: with 2,048 particles every row would. So the rows start one
  // cache line apart within the page (stride ≡ 8 doubles mod 512) and the gradients half a page
  // after the positions, whatever the addresses the allocator returns.
  void prepare(Index n, int d) {
    const int threads = thread_capacity();
    if (n != layout_.n || d != layout_.dim) {
      constexpr Index kPage = 512, kLine = 8, kHalfPage = 256;  // in doubles
      block_ = pair_sum_block_size(n);
      const int blocks = static_cast<int>((n + block_ - 1) / block_);
      schedule_ = TileSchedule(blocks);
      const Index stride = (blocks * block_ + kPage - 1) / kPage * kPage + kLine;
      const Index gap = ((kHalfPage - kLine * d) % kPage + kPage) % kPage;
      buffer_.assign(static_cast<std::size_t>(2 * d * stride + gap), 0.0);
      block_energy_.assign(blocks, 0.0);
      layout_ = {buffer_.data(), buffer_.data() + d * stride + gap, stride, n, d};
    }
    const std::size_t scratch_needed = static_cast<std::size_t>(3 * d * threads);
    if (scratch_.size() < scratch_needed) scratch_.resize(scratch_needed);
  }

  // The tiles as OpenMP tasks in schedule order (TileSchedule::run_as_tasks): every block's sums,
  // and the energy slot of each tile's first block, run in an order fixed by n alone.
  template <int D, bool Energy>
  void run() {
    schedule_.run_as_tasks(layout_.n >= kPairLoopParallelParticles, [this](const Tile& tile) {
      SimdDouble* scratch = scratch_.data() + 3 * layout_.dim * omp_get_thread_num();
      block_energy_[tile.first_block] +=
          interact_tile<D, Energy>(w_, layout_, block_, tile, scratch);
    });
  }

  const Evaluator w_;
  Index block_ = 0;
  TileSchedule schedule_{1};
  AlignedDoubles buffer_;  // the positions, then the gradients (prepare)
  std::vector<double> block_energy_;
  std::vector<SimdDouble> scratch_;
  PaddedParticles layout_{nullptr, nullptr, 0, -1, 0};
};

}  // namespace

std::unique_ptr<InteractionSum> make_blocked_pair_sum(const InteractionKernel& kernel) {
  return visit_simd(kernel, [](auto w) -> std::unique_ptr<InteractionSum> {
    return std::make_unique<BlockedPairSum<decltype(w)>>(w);
  });
}

}  // namespace cpm

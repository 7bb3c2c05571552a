#include "solvers/distributed_pair_sum.hpp"

#include <omp.h>

#include <algorithm>

#include "parallel/thread_governor.hpp"
#include "solvers/blocked_pair_sum.hpp"
#include "solvers/simd_pair_evaluators.hpp"

namespace cpm {

namespace {

// Own rows per tile and sources per tile of add_cross_pairs (a multiple of every SIMD width).
constexpr long kTileRows = 64, kTileSources = 256;

// For own rows [first, last) of x and the m sources y, held coordinate-major (coordinate a of
// source j at y[a · stride + j]): adds ∇W(x_k − y_j) to row k of `gradient` and ∇W(y_j − x_k) =
// −∇W(x_k − y_j) to source j's accumulator g (same layout), each pair evaluated once, one SIMD
// register of sources at a time; returns Σ W(x_k − y_j) over the pairs when Energy. The rows and
// sources are cut into tiles, and tiles that share neither rows nor sources run together: tile
// (i, j) in round (i + j) mod max(I, J). Every sum therefore runs in an order fixed by the tiling,
// whatever the thread count. `scratch` holds 2d registers per thread, `tile_energy` I · J values.
template <bool Energy, class Evaluator>
double add_cross_pairs(const Evaluator& w, const Eigen::MatrixXd& x, long first, long last,
                       const double* y, long m, long stride, Eigen::MatrixXd& gradient, double* g,
                       std::vector<SimdDouble>& scratch, std::vector<double>& tile_energy) {
  const int d = static_cast<int>(x.cols());
  constexpr long lanes = SimdDouble::size;
  const long row_tiles = (last - first + kTileRows - 1) / kTileRows;
  const long source_tiles = (m + kTileSources - 1) / kTileSources;
  if (row_tiles == 0 || source_tiles == 0) return 0.0;
  const long rounds = std::max(row_tiles, source_tiles);
  if constexpr (Energy) tile_energy.assign(static_cast<std::size_t>(row_tiles * source_tiles), 0.0);
#pragma omp parallel if ((last - first) * m > 4096)
  for (long round = 0; round < rounds; ++round) {
#pragma omp for schedule(dynamic)
    for (long i = 0; i < row_tiles; ++i) {
      const long j = (round - i % rounds + rounds) % rounds;
      if (j >= source_tiles) continue;
      SimdDouble* acc = scratch.data() + 2 * d * omp_get_thread_num();
      SimdDouble* xk = acc + d;
      const long row_end = std::min(last, first + (i + 1) * kTileRows);
      const long source_begin = j * kTileSources,
                 source_end = std::min(m, source_begin + kTileSources);
      SimdDouble energy(0.0);
      for (long k = first + i * kTileRows; k < row_end; ++k) {
        for (int a = 0; a < d; ++a) {
          xk[a] = SimdDouble(x(k, a));
          acc[a] = SimdDouble(0.0);
        }
        for (long s = source_begin; s < source_end; s += lanes) {
          SimdDouble r2(0.0);
          for (int a = 0; a < d; ++a) {
            const SimdDouble z = xk[a] - SimdDouble::load_unaligned(y + a * stride + s);
            r2 = xsimd::fma(z, z, r2);
          }
          SimdPairTerms t = w.template evaluate<Energy>(r2);
          if (s + lanes > source_end) {  // the tile's last register: lanes past it are padding
            const SimdMask inside = lanes_in_range(double(s), 0.0, double(source_end));
            t.minus_factor = xsimd::select(inside, t.minus_factor, SimdDouble(0.0));
            if constexpr (Energy) t.value = xsimd::select(inside, t.value, SimdDouble(0.0));
          }
          // ∇W(x_k − y_j) = −h (x_k − y_j) onto row k, +h (x_k − y_j) onto source j.
          for (int a = 0; a < d; ++a) {
            const SimdDouble hz =
                t.minus_factor * (xk[a] - SimdDouble::load_unaligned(y + a * stride + s));
            acc[a] -= hz;
            (SimdDouble::load_unaligned(g + a * stride + s) + hz)
                .store_unaligned(g + a * stride + s);
          }
          if constexpr (Energy) energy += t.value;
        }
        for (int a = 0; a < d; ++a) gradient(k, a) += xsimd::hadd(acc[a]);
      }
      if constexpr (Energy) tile_energy[i * source_tiles + j] = xsimd::hadd(energy);
    }
  }
  double total = 0.0;
  if constexpr (Energy)
    for (const double e : tile_energy) total += e;
  return total;
}

}  // namespace

DistributedPairSum::DistributedPairSum(const InteractionKernel& kernel, MPI_Comm communicator)
    : kernel_(kernel), local_(make_blocked_pair_sum(kernel)), communicator_(communicator) {
  MPI_Comm_rank(communicator_, &rank_);
  MPI_Comm_size(communicator_, &ranks_);
  counts_.resize(ranks_);
}

double DistributedPairSum::system_size(Eigen::Index rows) {
  return total(static_cast<double>(rows));
}

double DistributedPairSum::total(double local) {
  if (ranks_ > 1) MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_DOUBLE, MPI_SUM, communicator_);
  return local;
}

void DistributedPairSum::compute(const Eigen::MatrixXd& x, Eigen::MatrixXd& gradient,
                                 double* pair_energy) {
  const Eigen::Index n = x.rows();
  const int d = static_cast<int>(x.cols());
  double energy = 0.0;
  // A share of fewer than two particles has no pairs inside it (and may be empty).
  if (n >= 2)
    local_->compute(x, gradient, pair_energy ? &energy : nullptr);
  else
    gradient.setZero();
  if (ranks_ > 1) {
    const int count = static_cast<int>(n);
    MPI_Allgather(&count, 1, MPI_INT, counts_.data(), 1, MPI_INT, communicator_);
    // A share travels coordinate-major with a common stride (a multiple of the SIMD width),
    // followed by the gradient accumulated for it by the ranks it visited.
    constexpr long lanes = SimdDouble::size;
    const long largest = *std::max_element(counts_.begin(), counts_.end());
    const long stride = (largest + lanes - 1) / lanes * lanes;
    const std::size_t block = static_cast<std::size_t>(stride) * d;
    held_.assign(2 * block, 0.0);
    arriving_.resize(held_.size());
    const std::size_t registers = static_cast<std::size_t>(2 * d * thread_capacity());
    if (scratch_.size() < registers) scratch_.resize(registers);
    for (int a = 0; a < d; ++a)
      for (Eigen::Index k = 0; k < n; ++k)
        held_[static_cast<std::size_t>(a * stride + k)] = x(k, a);
    // ⌊P/2⌋ shifts visit every pair of shares once (docs/distributed.md §3). With P even the last
    // shift meets each pair of shares from both sides, so it is split: the lower rank takes the
    // visiting share's first half of rows, the upper rank its own second half.
    const int right = (rank_ + 1) % ranks_, left = (rank_ + ranks_ - 1) % ranks_;
    const int size = static_cast<int>(held_.size()), shifts = ranks_ / 2;
    double cross = 0.0;
    for (int shift = 1; shift <= shifts; ++shift) {
      MPI_Sendrecv(held_.data(), size, MPI_DOUBLE, right, shift, arriving_.data(), size, MPI_DOUBLE,
                   left, shift, communicator_, MPI_STATUS_IGNORE);
      std::swap(held_, arriving_);
      long m = counts_[(rank_ - shift + ranks_) % ranks_], first = 0;
      if (2 * shift == ranks_) {
        if (rank_ < shift)
          m /= 2;
        else
          first = n / 2;
      }
      cross += visit_simd(kernel_, [&](const auto& w) {
        return pair_energy
                   ? add_cross_pairs<true>(w, x, first, n, held_.data(), m, stride, gradient,
                                           held_.data() + block, scratch_, tile_energy_)
                   : add_cross_pairs<false>(w, x, first, n, held_.data(), m, stride, gradient,
                                            held_.data() + block, scratch_, tile_energy_);
      });
    }
    // The share held now belongs to rank − shifts: its gradient goes home; this rank's comes back.
    const int home = (rank_ - shifts + ranks_) % ranks_, back = (rank_ + shifts) % ranks_;
    MPI_Sendrecv(held_.data() + block, static_cast<int>(block), MPI_DOUBLE, home, ranks_,
                 arriving_.data(), static_cast<int>(block), MPI_DOUBLE, back, ranks_, communicator_,
                 MPI_STATUS_IGNORE);
    for (int a = 0; a < d; ++a)
      for (Eigen::Index k = 0; k < n; ++k)
        gradient(k, a) += arriving_[static_cast<std::size_t>(a * stride + k)];
    energy += 2.0 * cross;  // ordered pairs: each cross pair twice
    if (pair_energy) MPI_Allreduce(MPI_IN_PLACE, &energy, 1, MPI_DOUBLE, MPI_SUM, communicator_);
  }
  if (pair_energy) *pair_energy = energy;
}

}  // namespace cpm

#include "solvers/distributed_pair_sum.hpp"

#include <omp.h>

#include <algorithm>

#include "solvers/blocked_pair_sum.hpp"
#include "solvers/simd_pair_evaluators.hpp"

namespace cpm {

namespace {

// Adds Σ_j ∇W(x_k − y_j) to row k of `gradient` for the m sources y, held coordinate-major
// (coordinate a of source j at y[a · stride + j]), one SIMD register of sources at a time; returns
// Σ_k Σ_j W(x_k − y_j) when Energy (per-row sums in `row_energy`, added in row order). `scratch`
// holds 2d registers per thread.
template <bool Energy, class Evaluator>
double add_visiting_share(const Evaluator& w, const Eigen::MatrixXd& x, const double* y, long m,
                          long stride, Eigen::MatrixXd& gradient, std::vector<double>& row_energy,
                          std::vector<SimdDouble>& scratch) {
  const Eigen::Index n = x.rows();
  const int d = static_cast<int>(x.cols());
  constexpr long lanes = SimdDouble::size;
#pragma omp parallel for schedule(static) if (n * m > 4096)
  for (Eigen::Index k = 0; k < n; ++k) {
    SimdDouble* acc = scratch.data() + 2 * d * omp_get_thread_num();
    SimdDouble* xk = acc + d;
    for (int a = 0; a < d; ++a) {
      xk[a] = SimdDouble(x(k, a));
      acc[a] = SimdDouble(0.0);
    }
    SimdDouble energy(0.0);
    for (long j = 0; j < m; j += lanes) {
      SimdDouble r2(0.0);
      for (int a = 0; a < d; ++a) {
        const SimdDouble z = xk[a] - SimdDouble::load_unaligned(y + a * stride + j);
        r2 = xsimd::fma(z, z, r2);
      }
      SimdPairTerms t = w.template evaluate<Energy>(r2);
      if (j + lanes > m) {  // the last register: lanes past m are padding
        const SimdMask inside = lanes_in_range(double(j), 0.0, double(m));
        t.minus_factor = xsimd::select(inside, t.minus_factor, SimdDouble(0.0));
        if constexpr (Energy) t.value = xsimd::select(inside, t.value, SimdDouble(0.0));
      }
      // ∇W(x_k − y_j) = −h (x_k − y_j).
      for (int a = 0; a < d; ++a)
        acc[a] =
            fnma(t.minus_factor, xk[a] - SimdDouble::load_unaligned(y + a * stride + j), acc[a]);
      if constexpr (Energy) energy += t.value;
    }
    for (int a = 0; a < d; ++a) gradient(k, a) += xsimd::hadd(acc[a]);
    if constexpr (Energy) row_energy[k] = xsimd::hadd(energy);
  }
  double total = 0.0;
  if constexpr (Energy)
    for (Eigen::Index k = 0; k < n; ++k) total += row_energy[k];
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
    // Shares travel coordinate-major with a common stride (a multiple of the SIMD width).
    constexpr long lanes = SimdDouble::size;
    const long largest = *std::max_element(counts_.begin(), counts_.end());
    const long stride = (largest + lanes - 1) / lanes * lanes;
    held_.assign(static_cast<std::size_t>(stride) * d, 0.0);
    arriving_.resize(held_.size());
    if (row_energy_.size() < static_cast<std::size_t>(n)) row_energy_.resize(n);
    const std::size_t registers = static_cast<std::size_t>(2 * d * omp_get_max_threads());
    if (scratch_.size() < registers) scratch_.resize(registers);
    for (int a = 0; a < d; ++a)
      for (Eigen::Index k = 0; k < n; ++k)
        held_[static_cast<std::size_t>(a * stride + k)] = x(k, a);
    const int right = (rank_ + 1) % ranks_, left = (rank_ + ranks_ - 1) % ranks_;
    const int size = static_cast<int>(held_.size());
    for (int shift = 1; shift < ranks_; ++shift) {
      // Pass the share held (rank − shift + 1's) right; receive rank − shift's from the left.
      MPI_Sendrecv(held_.data(), size, MPI_DOUBLE, right, shift, arriving_.data(), size, MPI_DOUBLE,
                   left, shift, communicator_, MPI_STATUS_IGNORE);
      std::swap(held_, arriving_);
      const long received = counts_[(rank_ - shift + ranks_) % ranks_];
      energy += visit_simd(kernel_, [&](const auto& w) {
        return pair_energy ? add_visiting_share<true>(w, x, held_.data(), received, stride,
                                                      gradient, row_energy_, scratch_)
                           : add_visiting_share<false>(w, x, held_.data(), received, stride,
                                                       gradient, row_energy_, scratch_);
      });
    }
    if (pair_energy) MPI_Allreduce(MPI_IN_PLACE, &energy, 1, MPI_DOUBLE, MPI_SUM, communicator_);
  }
  if (pair_energy) *pair_energy = energy;
}

}  // namespace cpm

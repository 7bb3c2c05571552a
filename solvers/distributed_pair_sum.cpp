#include "solvers/distributed_pair_sum.hpp"

#include <algorithm>

#include "solvers/blocked_pair_sum.hpp"

namespace cpm {

namespace {

// Adds Σ_j ∇W(x_k − y_j) to row k of `gradient` for the m row-major sources y, and returns
// Σ_k Σ_j W(x_k − y_j) when `energy` is set (per-row sums in `row_energy`, in a fixed order).
// Coordinates per row accumulated on the stack; above, straight into the gradient.
constexpr int kStackDims = 16;

// Adds Σ_j ∇W(x_k − y_j) to row k of `gradient` for the m row-major sources y, and returns
// Σ_k Σ_j W(x_k − y_j) when `energy` is set (per-row sums in `row_energy`, added in row order).
template <class Evaluator>
double add_visiting_share(const Evaluator& w, const Eigen::MatrixXd& x, const double* y, long m,
                          Eigen::MatrixXd& gradient, bool energy, std::vector<double>& row_energy) {
  const Eigen::Index n = x.rows();
  const int d = static_cast<int>(x.cols());
#pragma omp parallel for schedule(static) if (n * m > 4096)
  for (Eigen::Index k = 0; k < n; ++k) {
    double acc[kStackDims] = {}, e = 0.0;
    for (long j = 0; j < m; ++j) {
      const double* yj = y + j * d;
      double r2 = 0.0;
      for (int a = 0; a < d; ++a) {
        const double z = x(k, a) - yj[a];
        r2 += z * z;
      }
      const double factor = w.gradient_factor(r2);
      for (int a = 0; a < d; ++a) {
        const double term = factor * (x(k, a) - yj[a]);
        if (d <= kStackDims)
          acc[a] += term;
        else
          gradient(k, a) += term;
      }
      if (energy) e += w.value_r2(r2);
    }
    if (d <= kStackDims)
      for (int a = 0; a < d; ++a) gradient(k, a) += acc[a];
    row_energy[k] = e;
  }
  double total = 0.0;
  if (energy)
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
    const long largest = *std::max_element(counts_.begin(), counts_.end());
    held_.resize(static_cast<std::size_t>(largest) * d);
    arriving_.resize(static_cast<std::size_t>(largest) * d);
    if (row_energy_.size() < static_cast<std::size_t>(n)) row_energy_.resize(n);
    for (Eigen::Index k = 0; k < n; ++k)
      for (int a = 0; a < d; ++a) held_[static_cast<std::size_t>(k) * d + a] = x(k, a);
    const int right = (rank_ + 1) % ranks_, left = (rank_ + ranks_ - 1) % ranks_;
    for (int shift = 1; shift < ranks_; ++shift) {
      // Pass the share held (rank − shift + 1's) right; receive rank − shift's from the left.
      const int sent = counts_[(rank_ - shift + 1 + ranks_) % ranks_];
      const int received = counts_[(rank_ - shift + ranks_) % ranks_];
      MPI_Sendrecv(held_.data(), sent * d, MPI_DOUBLE, right, shift, arriving_.data(), received * d,
                   MPI_DOUBLE, left, shift, communicator_, MPI_STATUS_IGNORE);
      std::swap(held_, arriving_);
      energy += visit(kernel_, [&](auto w) {
        return add_visiting_share(w, x, held_.data(), received, gradient, pair_energy != nullptr,
                                  row_energy_);
      });
    }
    if (pair_energy) MPI_Allreduce(MPI_IN_PLACE, &energy, 1, MPI_DOUBLE, MPI_SUM, communicator_);
  }
  if (pair_energy) *pair_energy = energy;
}

}  // namespace cpm

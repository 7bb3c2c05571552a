#pragma once
// The ranks that hold one system between them (docs/distributed.md §4): a communicator, or one
// process without MPI, where every operation below is the identity and MPI is never called. What
// a run over ranks needs besides its interaction sum: each rank's share of the particle ids, sums
// and maxima over ranks, the rows of every rank gathered on the first in id order, and failures
// that every rank agrees on (so that no rank waits for one that has stopped).
#include <mpi.h>

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/particles.hpp"

namespace cpm {

// The ids [first, first + count) a rank holds.
struct IdRange {
  std::uint64_t first = 0, count = 0;
};

// A failure agreed by every rank of a group, its line already written by the first rank: the line
// and the exit code of the command (2 bad input, 1 failure, 128 + signal after a stop).
class AgreedFailure : public std::runtime_error {
 public:
  AgreedFailure(const std::string& line, int exit_code)
      : std::runtime_error(line), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

class RankGroup {
 public:
  RankGroup() = default;  // one process, no MPI
  explicit RankGroup(MPI_Comm communicator);

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool first() const { return rank_ == 0; }
  bool spread() const { return size_ > 1; }
  MPI_Comm communicator() const { return communicator_; }

  // Contiguous blocks of the ids 0 … n − 1, the first n mod P ranks one id more.
  IdRange share(std::uint64_t n) const;
  // This rank's block of the rows of `all` (every particle, row i holding id i), ids recorded.
  Particles id_block(const Eigen::MatrixXd& all) const;

  // Each value becomes its sum (maximum) over the ranks; collective.
  void sum(double* values, int count) const;
  double sum(double value) const;
  double max(double value) const;
  bool all(bool value) const { return max(value ? 0.0 : 1.0) == 0.0; }

  // On the first rank, `out` becomes every rank's `count` values, rank after rank; elsewhere it is
  // left alone. Collective.
  void gather(const double* values, int count, std::vector<double>& out) const;
  void gather(const std::uint64_t* values, int count, std::vector<std::uint64_t>& out) const;

  // On the first rank, `out` becomes the rows of every rank with the row of id i at row i (the
  // ranks' ids together must be 0 … N − 1, each once; `ids` empty on one process means 0 … N − 1);
  // elsewhere it is left alone. Collective.
  void gather_by_id(const std::vector<std::uint64_t>& ids, const Eigen::MatrixXd& rows,
                    Eigen::MatrixXd& out) const;

  // Runs `phase` on every rank; if it threw on any rank, throws AgreedFailure on every rank with
  // the failure of the lowest such rank (reported by the first rank). On one process `phase`
  // simply runs and its exceptions pass unchanged. Collective.
  void agree(const std::function<void()>& phase) const;

 private:
  MPI_Comm communicator_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

}  // namespace cpm

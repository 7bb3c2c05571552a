#pragma once
// Independent replicas spread over MPI ranks (round robin) and OpenMP threads, with every
// replica's result gathered on rank 0 in replica order. A replica's result depends only on its
// index (and the seed it uses), so the gathered table is identical for any rank or thread count.
#include <Eigen/Dense>
#include <functional>
#include <string>

namespace cpm {

// Initialises MPI for the lifetime of the object (if nobody else did) and finalises it after.
class MpiEnvironment {
 public:
  MpiEnvironment();
  ~MpiEnvironment();
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }

 private:
  bool owns_ = false;
  int rank_ = 0, size_ = 1;
};

// Computes result(replica, 0..width−1) for replicas 0..count−1 with `compute(replica, row)`
// writing `width` doubles to row. Returns the (count, width) table on rank 0 and an empty matrix
// on the other ranks. `label` names the progress line printed by rank 0 (empty: silent).
Eigen::MatrixXd run_replicas(const MpiEnvironment& mpi, int count, int width,
                             const std::function<void(int replica, double* row)>& compute,
                             const std::string& label);

}  // namespace cpm

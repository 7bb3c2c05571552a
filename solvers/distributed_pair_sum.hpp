#pragma once
// The direct pair sum of one system spread over the ranks of a communicator (docs/distributed.md
// §3): each rank holds a share of the particles (any split; the rows of its Particles), computes
// the pairs inside its share with the blocked sum (solvers/blocked_pair_sum.hpp), and the shares
// pass round a ring, ⌊P/2⌋ shifts of MPI_Sendrecv, each carrying the gradient accumulated for it:
// a rank evaluates each pair between its share and the visitor once (the same SIMD evaluators)
// and adds it to both, and after the last shift the visitors' gradients go home. Every pair of
// shares meets once (with P even, the last shift's pairs are split between the two ranks). Memory
// per rank: its share and one visiting share with its gradient. It is an InteractionSum on the
// local rows, so ForceField and the integrators use it unchanged (with the particles' ids keying
// the noise). The gradient of a row is that of one process to rounding (the sums run in another
// order; ≤ 1e-12 relative in the tests); the pair energy, summed over every rank, is the same on
// each.
#include <mpi.h>

#include <memory>
#include <vector>

#include "solvers/interaction_sum.hpp"
#include "solvers/simd_math.hpp"

namespace cpm {

class DistributedPairSum final : public InteractionSum {
 public:
  DistributedPairSum(const InteractionKernel& kernel, MPI_Comm communicator);

  // x: this rank's rows; gradient: theirs, Σ over every particle of every rank. Every rank of the
  // communicator must call it (collective).
  void compute(const Eigen::MatrixXd& x, Eigen::MatrixXd& gradient, double* pair_energy) override;
  std::string name() const override { return "distributed direct"; }
  double system_size(Eigen::Index rows) override;
  double total(double local) override;

 private:
  InteractionKernel kernel_;
  std::unique_ptr<InteractionSum> local_;
  MPI_Comm communicator_;
  int rank_ = 0, ranks_ = 1;
  std::vector<int> counts_;
  std::vector<double> held_, arriving_;  // coordinate-major shares on the ring
  std::vector<SimdDouble> scratch_;      // per thread: the target row and its sums
  std::vector<double> tile_energy_;
};

}  // namespace cpm

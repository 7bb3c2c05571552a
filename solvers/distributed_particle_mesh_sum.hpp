#pragma once
// The particle-mesh sum of solvers/particle_mesh_sum.hpp for one system spread over the ranks of a
// communicator (docs/distributed.md §6). The mesh is cut into slabs of planes along its last axis
// s (SlabDecomposition's blocks of ⌈n_s/P⌉ planes) and a rank holds the particles whose last
// coordinate lies in its planes (redistribute() moves them there after every step). Per call:
//   1. ghosts: each rank sends the particles of its W = max(near_cells + 1, 1) outermost planes to
//      the neighbouring rank (MPI_Sendrecv down and up), enough for every deposit onto its own
//      planes and for every near pair of its particles;
//   2. the steps of the sum of one process on the rank's part of the mesh — its planes and
//      W + 1 halo planes each side — with its particles and the ghosts: stencils, deposit (its own
//      planes are then complete), W∗ρ by the distributed convolution
//      (solvers/distributed_fft_convolution.hpp), two planes of W∗ρ exchanged with each
//      neighbour for the centred differences, interpolation back, the exact near field;
//   3. its own rows of the result; the pair energy is the sum over ranks.
// Every rank with planes needs at least max(W, 2) of them (so that halos and ghosts come from the
// neighbours only): the constructor refuses more ranks than that allows. Results agree with the
// sum of one process to rounding (≤ 1e-12 relative in the MPI tests).
#include <mpi.h>

#include <memory>
#include <vector>

#include "parallel/particle_migration.hpp"
#include "parallel/plane_halos.hpp"
#include "parallel/slab_decomposition.hpp"
#include "solvers/distributed_fft_convolution.hpp"
#include "solvers/interaction_sum.hpp"
#include "solvers/particle_mesh_interpolation.hpp"
#include "solvers/particle_mesh_near_field.hpp"

namespace cpm {

// Seconds spent by this rank in the parts of compute() and redistribute(), summed over calls
// (MPI_Wtime; an exchange includes the wait for its neighbours): the particle work (stencils,
// deposit, differences, interpolation, near field), the convolution's parts, the exchanges of
// ghosts and halo planes, the migration.
struct MeshSumTimes {
  double particles = 0.0, near_field = 0.0, exchanges = 0.0, migration = 0.0;
  ConvolutionTimes convolution;
  long calls = 0;
};

class DistributedParticleMeshSum final : public InteractionSum {
 public:
  // As make_particle_mesh_sum; collective over `communicator`. Throws std::invalid_argument (on
  // every rank) when a rank would hold too few planes.
  DistributedParticleMeshSum(const InteractionKernel& kernel, const Eigen::VectorXd& lower,
                             const Eigen::VectorXd& upper, const Eigen::VectorXi& cells,
                             int near_cells, MPI_Comm communicator);

  // x: this rank's particles, all inside its planes (after redistribute). Collective; throws
  // std::out_of_range on every rank when a particle of some rank left its planes or the mesh.
  void compute(const Eigen::MatrixXd& x, Eigen::MatrixXd& gradient, double* pair_energy) override;
  std::string name() const override { return "distributed mesh"; }
  double system_size(Eigen::Index rows) override { return total(static_cast<double>(rows)); }
  double total(double local) override;
  void redistribute(Particles& particles) override;

  const SlabDecomposition& slabs() const { return slabs_; }
  MeshSumTimes times() const;
  // Bytes of the buffers this rank holds: the convolution's, the part's fields and cell list,
  // the particles' and ghosts' copies.
  double memory_bytes() const;

 private:
  void exchange_ghosts(const Eigen::MatrixXd& x);

  MPI_Comm communicator_;
  int rank_ = 0, ranks_ = 1;
  MeshInterpolation mesh_;  // the whole mesh: stencils
  SlabDecomposition slabs_;
  ParticleMigration migration_;
  DistributedFftConvolution convolution_;
  int ghost_planes_ = 1;
  long part_first_ = 0, part_planes_ = 0;  // this rank's part of the mesh: planes and halos
  Eigen::Index plane_cells_ = 1;
  PlaneHalos halos_;  // two planes of W∗ρ; its neighbours also receive the ghosts
  std::unique_ptr<MeshInterpolation> part_;  // null on a rank without planes
  std::unique_ptr<NearFieldCorrection> near_field_;
  std::unique_ptr<MeshCellList> cell_list_;
  std::vector<double> density_, potential_,
      field_;                 // on the part; field: axis a at [a · M_part, …)
  Eigen::MatrixXd extended_;  // this rank's rows, then the ghosts (rows beyond `rows_` unused)
  Eigen::Index rows_ = 0;
  std::vector<MeshStencil> stencils_;
  std::vector<double> send_down_, send_up_, received_;
  std::vector<double> sorted_gradient_, sorted_energy_;
  MeshSumTimes times_;
};

}  // namespace cpm

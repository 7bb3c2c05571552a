#include "solvers/distributed_particle_mesh_sum.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "parallel/plane_halos.hpp"

namespace cpm {

namespace {

int size_of(MPI_Comm communicator) {
  int size = 1;
  MPI_Comm_size(communicator, &size);
  return size;
}

// Message tags of the ghost exchanges.
enum Tag : int { kGhostCountDown = 1, kGhostCountUp, kGhostsDown, kGhostsUp };

}  // namespace

DistributedParticleMeshSum::DistributedParticleMeshSum(const InteractionKernel& kernel,
                                                       const Eigen::VectorXd& lower,
                                                       const Eigen::VectorXd& upper,
                                                       const Eigen::VectorXi& cells, int near_cells,
                                                       MPI_Comm communicator)
    : communicator_(communicator),
      ranks_(size_of(communicator)),
      mesh_(particle_mesh_grid(lower, upper, cells)),
      slabs_(mesh_.grid().lower()[cells.size() - 1], mesh_.grid().upper()[cells.size() - 1],
             cells[cells.size() - 1], ranks_),
      migration_(slabs_, communicator, static_cast<int>(cells.size()) - 1),
      convolution_(mesh_.grid(), kernel, communicator),
      ghost_planes_(std::max(near_cells + 1, 1)) {
  MPI_Comm_rank(communicator_, &rank_);
  const Grid& grid = mesh_.grid();
  const int d = grid.dim(), s = d - 1;
  plane_cells_ = grid.stride(s);
  const long needed = std::max(ghost_planes_, 2);
  for (int r = 0; r < ranks_; ++r)
    if (slabs_.plane_count(r) > 0 && slabs_.plane_count(r) < needed)
      throw std::invalid_argument(
          "the particle-mesh sum over " + std::to_string(ranks_) + " ranks gives a rank " +
          std::to_string(slabs_.plane_count(r)) + " of the mesh's " +
          std::to_string(slabs_.planes()) + " planes along its last axis; it needs at least " +
          std::to_string(needed) + " per rank: use fewer ranks or a finer mesh");
  const long first = slabs_.first_plane(rank_), count = slabs_.plane_count(rank_);
  if (count == 0) return;
  // The part: the rank's planes with ghost_planes_ + 1 halo planes each side (ghosts' stencils).
  const long halo = ghost_planes_ + 1;
  part_first_ = std::max(first - halo, 0L);
  part_planes_ = std::min(first + count + halo, slabs_.planes()) - part_first_;
  halos_ = PlaneHalos::of_slab(slabs_, rank_, plane_cells_, first - part_first_, 2, communicator_);
  Eigen::VectorXd part_lower = grid.lower(), part_upper = grid.upper();
  part_lower[s] = grid.lower()[s] + static_cast<double>(part_first_) * grid.spacing(s);
  part_upper[s] = part_lower[s] + static_cast<double>(part_planes_) * grid.spacing(s);
  Eigen::VectorXi part_cells = grid.cells();
  part_cells[s] = static_cast<int>(part_planes_);
  part_ = std::make_unique<MeshInterpolation>(
      Grid(Domain::box(part_lower, part_upper), part_lower, part_upper, part_cells));
  near_field_ =
      std::make_unique<NearFieldCorrection>(kernel, convolution_.weights(), part_cells, near_cells);
  const Eigen::Index part_size = part_->grid().size();
  cell_list_ = std::make_unique<MeshCellList>(part_size, d);
  density_.assign(static_cast<std::size_t>(part_size), 0.0);
  potential_.assign(density_.size(), 0.0);
  field_.assign(density_.size() * static_cast<std::size_t>(d), 0.0);
}

void DistributedParticleMeshSum::redistribute(Particles& particles) {
  const double start = MPI_Wtime();
  migration_.migrate(particles);
  times_.migration += MPI_Wtime() - start;
}

MeshSumTimes DistributedParticleMeshSum::times() const {
  MeshSumTimes t = times_;
  t.convolution = convolution_.times();
  return t;
}

double DistributedParticleMeshSum::memory_bytes() const {
  const double cells = static_cast<double>(density_.size()), rows = static_cast<double>(rows_);
  const int d = mesh_.grid().dim();
  // The part's density, potential, field and corner masses; per particle or ghost its copy, its
  // stencil, the cell list's sorted copies and the sorted results.
  return convolution_.memory_bytes() + cells * (2.0 + d + (1 << d)) * sizeof(double) +
         rows * ((2.0 * d + 2.0 + 2.0 * d + 1.0) * sizeof(double) + sizeof(MeshStencil));
}

double DistributedParticleMeshSum::total(double local) {
  MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_DOUBLE, MPI_SUM, communicator_);
  return local;
}

void DistributedParticleMeshSum::exchange_ghosts(const Eigen::MatrixXd& x) {
  const Grid& grid = mesh_.grid();
  const int d = grid.dim(), s = d - 1;
  const Eigen::Index n = x.rows();
  const long first = slabs_.first_plane(rank_), count = slabs_.plane_count(rank_);
  send_down_.clear();
  send_up_.clear();
  for (Eigen::Index k = 0; k < n; ++k) {
    const double plane = std::floor((x(k, s) - grid.lower()[s]) / grid.spacing(s));
    if (halos_.below != MPI_PROC_NULL && plane < static_cast<double>(first + ghost_planes_))
      for (int a = 0; a < d; ++a) send_down_.push_back(x(k, a));
    if (halos_.above != MPI_PROC_NULL &&
        plane >= static_cast<double>(first + count - ghost_planes_))
      for (int a = 0; a < d; ++a) send_up_.push_back(x(k, a));
  }
  int down = static_cast<int>(send_down_.size()) / d, up = static_cast<int>(send_up_.size()) / d;
  int from_above = 0, from_below = 0;
  MPI_Sendrecv(&down, 1, MPI_INT, halos_.below, kGhostCountDown, &from_above, 1, MPI_INT,
               halos_.above, kGhostCountDown, communicator_, MPI_STATUS_IGNORE);
  MPI_Sendrecv(&up, 1, MPI_INT, halos_.above, kGhostCountUp, &from_below, 1, MPI_INT, halos_.below,
               kGhostCountUp, communicator_, MPI_STATUS_IGNORE);
  received_.resize(static_cast<std::size_t>(from_above + from_below) * d);
  MPI_Sendrecv(send_down_.data(), down * d, MPI_DOUBLE, halos_.below, kGhostsDown, received_.data(),
               from_above * d, MPI_DOUBLE, halos_.above, kGhostsDown, communicator_,
               MPI_STATUS_IGNORE);
  MPI_Sendrecv(send_up_.data(), up * d, MPI_DOUBLE, halos_.above, kGhostsUp,
               received_.data() + static_cast<std::size_t>(from_above) * d, from_below * d,
               MPI_DOUBLE, halos_.below, kGhostsUp, communicator_, MPI_STATUS_IGNORE);
  rows_ = n + from_above + from_below;
  if (extended_.rows() < rows_ || extended_.cols() != d)
    extended_.resize(rows_ + rows_ / 4 + 16, d);  // grows, rarely
  extended_.topRows(n) = x;
  for (Eigen::Index g = 0; g < rows_ - n; ++g)
    for (int a = 0; a < d; ++a)
      extended_(n + g, a) = received_[static_cast<std::size_t>(g) * d + a];
}

void DistributedParticleMeshSum::compute(const Eigen::MatrixXd& x, Eigen::MatrixXd& gradient,
                                         double* pair_energy) {
  const int d = mesh_.grid().dim(), s = d - 1;
  if (x.cols() != d) throw std::invalid_argument("particle-mesh sum: wrong particle dimension");
  const Eigen::Index n = x.rows();
  ++times_.calls;
  double start = MPI_Wtime();
  auto lap = [&start](double& total) {
    const double now = MPI_Wtime();
    total += now - start;
    start = now;
  };
  exchange_ghosts(x);
  lap(times_.exchanges);

  // Stencils on the whole mesh, moved to the part; every particle must be inside the part with
  // its stencil, and this rank's own particles inside its planes.
  int inside = part_ || n == 0;
  if (part_) {
    stencils_.resize(static_cast<std::size_t>(rows_));
#pragma omp parallel for schedule(static) reduction(&& : inside)
    for (Eigen::Index k = 0; k < rows_; ++k) {
      MeshStencil& st = stencils_[k];
      bool ok = mesh_.stencil(extended_, k, st);
      st.cell[s] -= static_cast<int>(part_first_);
      st.base -= part_first_ * plane_cells_;
      ok = ok && st.cell[s] >= 0 && st.cell[s] <= part_planes_ - 2;
      if (k < n) ok = ok && slabs_.owner(extended_(k, s)) == rank_;
      inside = inside && ok;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &inside, 1, MPI_INT, MPI_LAND, communicator_);
  if (!inside)
    throw std::out_of_range(
        "particle-mesh sum over ranks: a particle left the box of the mesh or its rank's slab");

  const long first = slabs_.first_plane(rank_), count = slabs_.plane_count(rank_);
  const Eigen::Index own = (first - part_first_) * plane_cells_;
  if (part_) {
    cell_list_->build(extended_.topRows(rows_), stencils_);
    part_->deposit(*cell_list_, density_.data(), own, own + count * plane_cells_);
  }
  lap(times_.particles);
  convolution_.convolve(density_.data() + own, potential_.data() + own);
  start = MPI_Wtime();
  halos_.exchange(potential_.data());  // the planes next to the slab, for the differences
  lap(times_.exchanges);
  double energy = 0.0;
  if (part_) {
    // Differences on the own planes and one plane beyond each side (the stencils' corners).
    const Eigen::Index from = std::max<Eigen::Index>(first - 1 - part_first_, 1) * plane_cells_;
    const Eigen::Index to =
        std::min<Eigen::Index>(first + count + 1 - part_first_, part_planes_ - 1) * plane_cells_;
    part_->differences(potential_.data(), field_.data(), from, to);
    if (sorted_energy_.size() < static_cast<std::size_t>(rows_)) {
      sorted_energy_.resize(static_cast<std::size_t>(rows_));
      sorted_gradient_.resize(static_cast<std::size_t>(rows_ * d));
    }
    part_->interpolate(*cell_list_, potential_.data(), field_.data(), sorted_gradient_.data(),
                       sorted_energy_.data());
    lap(times_.particles);
    near_field_->apply(*cell_list_, sorted_gradient_.data(),
                       pair_energy ? sorted_energy_.data() : nullptr);
    lap(times_.near_field);
    const Eigen::Index* row = cell_list_->particle();
#pragma omp parallel for schedule(static)
    for (Eigen::Index i = 0; i < rows_; ++i)
      if (row[i] < n)
        for (int a = 0; a < d; ++a) gradient(row[i], a) = sorted_gradient_[a * rows_ + i];
    if (pair_energy)
      for (Eigen::Index i = 0; i < rows_; ++i)
        if (row[i] < n) energy += sorted_energy_[i];
    lap(times_.particles);
  }
  if (pair_energy) *pair_energy = total(energy);
}

}  // namespace cpm

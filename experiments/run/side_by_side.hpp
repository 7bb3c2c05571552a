#pragma once
// `cpm run` with a [grid] section: the N-particle system and the McKean–Vlasov grid solver evolve
// from the same initial law (particles drawn from ρ_0) on one clock, and at every output time the
// runner records how far the empirical measure is from ρ_t (docs/numerics.md §3): exact W1/W2 in
// 1D, sliced W2, Gaussian MMD, histogram L1, the means and covariances of both, the particles'
// energy terms and the grid's free energy. Over several MPI ranks the particles are spread as in
// a particle run (each rank its block of ids, the interaction sum distributed) and each rank
// solves its slab of the grid (docs/distributed.md §7); the distances come from each rank's
// particles and slab (parallel/spread_distances.hpp), and the first rank gathers the particles and
// the fields only to write the frames.
#include <memory>
#include <string>
#include <vector>

#include "config/run_config.hpp"
#include "core/grid.hpp"
#include "core/particles.hpp"
#include "experiments/model_builder.hpp"
#include "experiments/run/run_loop.hpp"
#include "io/h5md_reader.hpp"
#include "parallel/spread_distances.hpp"
#include "solvers/force_field.hpp"
#include "solvers/mckean_vlasov.hpp"
#include "solvers/particle_integrator.hpp"

namespace cpm {

class SideBySideRun final : public RunSystem {
 public:
  // Builds both systems at t = 0. Throws InputError (one line, exit code 2) for a fixed grid
  // step above the stability bound of ρ_0, for an initial law whose mass the grid's cells inside
  // D do not hold (to 1e-3), and for a bad initial density file.
  explicit SideBySideRun(const RunConfig& config, RankGroup ranks = {});

  // Continues from a checkpoint of the same configuration (experiments/run/run_restart.hpp): the
  // particles' positions, the grid density, and both solvers' clocks and counters.
  void restore(const Checkpoint& checkpoint) override;
  // Both solvers' state for a checkpoint: the particle integrator's entries and "grid.time",
  // "grid.steps".
  IntegratorState save_state() const override;

  // Advances the particles and the grid solver to time t ≥ time().
  double advance_to(double t) override;
  double time() const { return solver_->time(); }

  // The names of the values measure() returns, in order; "w1" and "w2" only when d = 1.
  std::vector<std::string> columns() const override;
  // Everything recorded at the current time (one row of the run's table; over several ranks
  // collective, every rank receiving the row).
  std::vector<double> measure() override;
  // Over several ranks, the whole grid's density and W∗ρ on the first rank for the frame
  // (collective).
  void gather_fields() override;
  std::string headline() const override { return grid().dim() == 1 ? "w1" : "sliced_w2"; }
  std::string table_name() const override { return "side_by_side.csv"; }

  // The state, for output and checkpoints: particle positions, the grid density and W∗ρ, and the
  // clock.
  Particles& particles() override { return particles_; }
  McKeanVlasovSolver& grid_solver() { return *solver_; }
  ParticleIntegrator& particle_integrator() override { return *system_.integrator; }
  ForceField& forces() override { return *system_.forces; }
  const Grid& grid() const { return solver_->whole_grid(); }
  const Grid* field_grid() const override { return &solver_->whole_grid(); }
  // The whole grid's fields (over several ranks: as gathered by the last gather_fields(), on the
  // first rank).
  const std::vector<double>* density() const override {
    return ranks_.spread() ? &gathered_density_ : &solver_->density();
  }
  const std::vector<double>* potential() const override {
    return ranks_.spread() ? &gathered_potential_ : &solver_->interaction_potential();
  }
  double mmd_bandwidth() const { return bandwidth_; }
  // The particles' histogram over the grid density along axis 0 (d > 1: the marginals in x_0), at
  // every output time measured so far (over several ranks, on the first rank): bin centres,
  // histogram, cell centres and ρ's marginal.
  struct Profile {
    double time = 0.0;
    std::vector<double> bin_centres, histogram, cell_centres, density;
  };
  const std::vector<Profile>& profiles() const { return profiles_; }
  std::string info() const override;
  void draw_figures(const std::string& directory) const override;
  const RankGroup& ranks() const override { return ranks_; }

 private:
  RunConfig config_;
  RankGroup ranks_;
  std::vector<double> gathered_density_, gathered_potential_;  // over ranks: the frame's fields
  ParticleSystem system_;
  std::unique_ptr<McKeanVlasovSolver> solver_;
  Particles particles_;
  Eigen::MatrixXd directions_;
  double bandwidth_ = 0.0;
  std::vector<Profile> profiles_;
};

// The profile of `rho` on `grid` and the particles `x` at `time`: a histogram of x_0 on bins of
// whole cells, about √N of them (8 to 200), and ρ's marginal in x_0 per cell, both as densities.
SideBySideRun::Profile marginal_profile(double time, const Eigen::MatrixXd& x, const Grid& grid,
                                        const std::vector<double>& rho);
// The same from each rank's particles and slab of ρ (collective): the bins' counts and, in d > 1,
// the marginal summed over the ranks; in 1D the marginal is ρ itself, each rank's cells gathered.
// Complete on the first rank; elsewhere without the marginal in 1D.
SideBySideRun::Profile marginal_profile(double time, const Eigen::MatrixXd& x,
                                        const DensitySlab& slab, const RankGroup& ranks);

// Runs the study into config.output.directory (or continues it from options.restart):
// side_by_side.csv (one row per output time, the columns of SideBySideRun), run.h5 (H5MD),
// run.pvd (ParaView), PNG plots of the distances and the energies, and run_info.txt.
void run_side_by_side(const RunConfig& config, const CommandOptions& options,
                      const RankGroup& ranks = {});

}  // namespace cpm

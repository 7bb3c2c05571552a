#include "experiments/run/side_by_side.hpp"

#include "experiments/run/run_output.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "core/empirical_distances.hpp"
#include "core/observables.hpp"
#include "experiments/model_builder.hpp"
#include "experiments/run/run_restart.hpp"
#include "io/input_error.hpp"
#include "io/number_format.hpp"
#include "parallel/ensemble_reductions.hpp"
#include "solvers/grid_density.hpp"
#include "viz/plot.hpp"

namespace cpm {

namespace {

// Cell averages of the [initial] law must hold its mass: otherwise the grid would start from a
// renormalised, truncated law while the particles start from the full one.
constexpr double kLawMassTolerance = 1e-3;

void check_grid_inputs(const RunConfig& config, const Grid& grid, McKeanVlasovSolver& solver) {
  const GridConfig& g = *config.grid;
  if (g.initial.kind == GridInitialKind::law) {
    const double held = density_mass(grid, cell_averages(grid, [&](const Eigen::VectorXd& x) {
                                       return config.initial.density(x);
                                     }));
    if (held < 1.0 - kLawMassTolerance)
      throw InputError(
          config.source +
          ": grid: grid too small for the initial law: its cells inside the domain hold " +
          format_number(100.0 * held) + "% of the mass; enlarge grid.lower/grid.upper");
  }
  if (g.step > 0.0) {
    const double bound = solver.stable_step();
    if (g.step > bound)
      throw InputError(config.source + ": grid.step: " + format_number(g.step) +
                       " exceeds the stability bound " + format_number(bound) +
                       " of the initial density (CFL, diffusion and interaction limits)");
  }
}

// Up to `count` indices spread over 0 … size − 1, first and last included.
std::vector<std::size_t> spread_indices(std::size_t size, std::size_t count) {
  std::vector<std::size_t> out;
  if (size == 0) return out;
  count = std::min(count, size);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t index = count == 1 ? size - 1 : i * (size - 1) / (count - 1);
    if (out.empty() || out.back() != index) out.push_back(index);
  }
  return out;
}

// The bins of the profile's histogram: `per_bin` whole cells of axis 0 each, about √N bins.
struct ProfileBins {
  int cells = 0, per_bin = 1, bins = 0;
};
ProfileBins profile_bins(const Grid& grid, double n) {
  ProfileBins b;
  b.cells = grid.cells(0);
  const int wanted = std::clamp(static_cast<int>(std::lround(std::sqrt(n))), 8, 200);
  b.per_bin = std::max(1, (b.cells + wanted - 1) / wanted);
  b.bins = (b.cells + b.per_bin - 1) / b.per_bin;
  return b;
}

// The counts of the particles `x` per bin.
std::vector<double> bin_counts(const Eigen::MatrixXd& x, const Grid& grid, const ProfileBins& b) {
  const double h = grid.spacing(0), lower = grid.lower()[0];
  std::vector<double> counts(b.bins, 0.0);
  for (Eigen::Index k = 0; k < x.rows(); ++k) {
    const double cell = std::floor((x(k, 0) - lower) / h);
    if (cell >= 0 && cell < b.cells) counts[static_cast<int>(cell) / b.per_bin] += 1.0;
  }
  return counts;
}

// The profile's cell centres and histogram (as a density) from the bins' counts of n particles.
void fill_profile(SideBySideRun::Profile& p, const Grid& grid, const ProfileBins& b,
                  const std::vector<double>& counts, double n) {
  const double h = grid.spacing(0), lower = grid.lower()[0];
  p.cell_centres.resize(b.cells);
  for (int i = 0; i < b.cells; ++i) p.cell_centres[i] = lower + (i + 0.5) * h;
  for (int bin = 0; bin < b.bins; ++bin) {
    const int first = bin * b.per_bin, width = std::min(b.per_bin, b.cells - first);
    p.bin_centres.push_back(lower + (first + 0.5 * width) * h);
    p.histogram.push_back(counts[bin] / (n * width * h));
  }
}

}  // namespace

SideBySideRun::Profile marginal_profile(double time, const Eigen::MatrixXd& x, const Grid& grid,
                                        const std::vector<double>& rho) {
  SideBySideRun::Profile p;
  p.time = time;
  const int cells = grid.cells(0);
  const double other_volume = grid.cell_volume() / grid.spacing(0);
  p.density.assign(cells, 0.0);
  for (Eigen::Index c = 0; c < grid.size(); ++c) p.density[c % cells] += rho[c] * other_volume;
  const double n = static_cast<double>(x.rows());
  const ProfileBins bins = profile_bins(grid, n);
  fill_profile(p, grid, bins, bin_counts(x, grid, bins), n);
  return p;
}

SideBySideRun::Profile marginal_profile(double time, const Eigen::MatrixXd& x,
                                        const DensitySlab& slab, const RankGroup& ranks) {
  const Grid& grid = slab.grid();
  SideBySideRun::Profile p;
  p.time = time;
  const int cells = grid.cells(0);
  const double other_volume = grid.cell_volume() / grid.spacing(0);
  const Eigen::Index first = slab.first_cell();
  if (grid.dim() == 1) {  // the slabs are the cells in order: ρ's own part of the profile
    std::vector<double> own(static_cast<std::size_t>(slab.size()));
    for (Eigen::Index c = 0; c < slab.size(); ++c) own[c] = slab.values()[c] * other_volume;
    ranks.gather(own.data(), static_cast<int>(own.size()), p.density);
  } else {
    p.density.assign(cells, 0.0);
    for (Eigen::Index c = 0; c < slab.size(); ++c)
      p.density[(first + c) % cells] += slab.values()[c] * other_volume;
    ranks.sum(p.density.data(), cells);
  }
  const double n = ranks.sum(static_cast<double>(x.rows()));
  const ProfileBins bins = profile_bins(grid, n);
  std::vector<double> counts = bin_counts(x, grid, bins);
  ranks.sum(counts.data(), bins.bins);
  fill_profile(p, grid, bins, counts, n);
  return p;
}

SideBySideRun::SideBySideRun(const RunConfig& config, RankGroup ranks)
    : config_(config), ranks_(ranks) {
  if (!config_.grid) throw std::invalid_argument("a side-by-side run needs a [grid] section");
  const Grid grid = make_grid(config_);
  ParticleSystemSpec spec = particle_system_spec(config_);
  spec.ranks = ranks_;
  system_ = build_particle_system(spec, 0);
  solver_ = make_grid_solver(config_, grid, system_.forces->potential(), ranks_);
  check_grid_inputs(config_, grid, *solver_);
  if (ranks_.spread()) {  // the solver holds a slab: the particles come from the whole ρ_0
    particles_ = sample_initial_share(config_, grid, make_initial_density(config_, grid),
                                      ranks_.share(static_cast<std::uint64_t>(config_.n)), 0);
    system_.forces->redistribute(particles_);
  } else {
    particles_ = sample_initial_particles(config_, grid, solver_->density(), config_.n, 0);
  }
  directions_ = slicing_directions(grid.dim(), config_.grid->directions);
  bandwidth_ = config_.grid->mmd_bandwidth > 0.0 ? config_.grid->mmd_bandwidth
                                                 : (grid.upper() - grid.lower()).minCoeff() / 20.0;
}

void SideBySideRun::restore(const Checkpoint& checkpoint) {
  // Every particle in id order, whatever the ranks that wrote it: each rank takes its id block.
  if (ranks_.spread()) {
    particles_ = ranks_.id_block(checkpoint.positions);
    system_.forces->redistribute(particles_);
  } else {
    particles_.positions = checkpoint.positions;
  }
  system_.integrator->restore_state(checkpoint.state.solver_state);
  const double grid_steps = state_entry(checkpoint.state.solver_state, "grid.steps");
  solver_->set_state(
      McKeanVlasovSolver::State(checkpoint.density.begin(), checkpoint.density.end()),
      state_entry(checkpoint.state.solver_state, "grid.time"),
      static_cast<std::uint64_t>(grid_steps));
}

IntegratorState SideBySideRun::save_state() const {
  IntegratorState state = system_.integrator->save_state();
  state["grid.time"] = solver_->time();
  state["grid.steps"] = static_cast<double>(solver_->steps_taken());
  return state;
}

double SideBySideRun::advance_to(double t) {
  ParticleIntegrator& integrator = *system_.integrator;
  integrator.advance_to(particles_, t);
  // Stopped early, the grid lands on the particles' time with a shortened step: the continued
  // run's grid then differs from an uninterrupted one by the scheme's time-step error.
  const double reached = integrator.stopped() ? integrator.time() : t;
  solver_->advance_to(reached);
  return reached;
}

std::string SideBySideRun::info() const {
  std::ostringstream o;
  o << "grid_cells = " << grid().cells().transpose()
    << "\ngrid_lower = " << grid().lower().transpose()
    << "\ngrid_upper = " << grid().upper().transpose()
    << "\ngrid_scheme = " << name_of(config_.grid->scheme) << "\nmmd_bandwidth = " << bandwidth_
    << '\n';
  return o.str();
}

std::vector<std::string> SideBySideRun::columns() const {
  const int d = grid().dim();
  std::vector<std::string> c = {"time",
                                "particle_energy_external",
                                "particle_energy_interaction",
                                "particle_energy_total",
                                "grid_energy_external",
                                "grid_energy_interaction",
                                "grid_entropy",
                                "grid_free_energy",
                                "grid_mass"};
  if (d == 1) c.insert(c.end(), {"w1", "w2"});
  c.insert(c.end(), {"sliced_w2", "mmd", "l1_histogram"});
  for (const std::string side : {"particle", "grid"})
    for (int a = 0; a < d; ++a) c.push_back(side + "_mean_" + std::to_string(a));
  for (const std::string side : {"particle", "grid"})
    for (int a = 0; a < d; ++a)
      for (int b = a; b < d; ++b)
        c.push_back(side + "_cov_" + std::to_string(a) + std::to_string(b));
  c.push_back("grid_steps");
  return c;
}

std::vector<double> SideBySideRun::measure() {
  const EnergyTerms e = system_.forces->energy(particles_.positions);
  const GridEnergy g = solver_->energy();
  const double mass = solver_->mass();
  const Eigen::MatrixXd& x = particles_.positions;
  const int d = grid().dim();
  std::vector<double> row = {time(),        e.external, e.interaction,   e.total(), g.external,
                             g.interaction, g.entropy,  g.free_energy(), mass};
  Eigen::VectorXd particle_mean, grid_mean;
  Eigen::MatrixXd particle_cov, grid_cov;
  if (ranks_.spread()) {
    // Each rank measures from its own particles and its own planes of ρ, and every rank receives
    // the values of the whole system (parallel/spread_distances.hpp): nothing is gathered.
    const DensitySlab slab(grid(), solver_->first_plane(), solver_->plane_count(),
                           solver_->own_density());
    if (d == 1) {
      const Wasserstein1D w = wasserstein_1d(x.col(0), slab, ranks_);
      row.insert(row.end(), {w.w1, w.w2, w.w2});  // the sliced W2 of a line is W2
    } else {
      row.push_back(sliced_wasserstein2(x, slab, directions_, ranks_));
    }
    row.push_back(mmd_gaussian(x, slab, bandwidth_, ranks_));
    row.push_back(histogram_l1(x, slab, ranks_));
    particle_mean = ensemble_mean(x, ranks_);
    grid_mean = density_mean(slab, ranks_);
    particle_cov = ensemble_covariance(x, particle_mean, ranks_);
    grid_cov = density_covariance(slab, ranks_);
    SideBySideRun::Profile profile = marginal_profile(time(), x, slab, ranks_);
    if (ranks_.first()) profiles_.push_back(std::move(profile));
  } else {
    const std::vector<double>& rho = solver_->density();
    if (d == 1) {
      const Wasserstein1D w = wasserstein_1d(x.col(0), grid(), rho);
      row.insert(row.end(), {w.w1, w.w2});
    }
    row.push_back(sliced_wasserstein2(x, grid(), rho, directions_));
    row.push_back(mmd_gaussian(x, grid(), rho, bandwidth_));
    row.push_back(histogram_l1(x, grid(), rho));
    particle_mean = ensemble_mean(x);
    grid_mean = density_mean(grid(), rho);
    particle_cov = ensemble_covariance(x);
    grid_cov = density_covariance(grid(), rho);
    profiles_.push_back(marginal_profile(time(), x, grid(), rho));
  }
  for (int a = 0; a < d; ++a) row.push_back(particle_mean[a]);
  for (int a = 0; a < d; ++a) row.push_back(grid_mean[a]);
  for (const Eigen::MatrixXd* cov : {&particle_cov, &grid_cov})
    for (int a = 0; a < d; ++a)
      for (int b = a; b < d; ++b) row.push_back((*cov)(a, b));
  row.push_back(static_cast<double>(solver_->steps_taken()));
  return row;
}

void SideBySideRun::gather_fields() {
  if (!ranks_.spread()) return;
  solver_->gather_density(gathered_density_);
  solver_->gather_interaction_potential(gathered_potential_);
}

void SideBySideRun::draw_figures(const std::string& dir) const {
  const std::string title = "particles (N = " + std::to_string(config_.n) + ") and grid";
  const int d = grid().dim();
  // The distances against time, then the particles' histogram over ρ_t at three times.
  Figure figure{dir + "side_by_side.png", title + " side by side", {}, 2};
  figure.panels.push_back(
      table_panel(dir + "side_by_side.csv", "time",
                  d == 1 ? std::vector<std::string>{"w1", "w2", "mmd", "l1_histogram"}
                         : std::vector<std::string>{"sliced_w2", "mmd", "l1_histogram"},
                  "distance", true));
  figure.panels.back().title = "distance of the empirical measure to the density";
  for (const std::size_t i : spread_indices(profiles_.size(), 3)) {
    const Profile& p = profiles_[i];
    Panel panel;
    panel.title = "t = " + format_number(p.time) + (d == 1 ? "" : ": marginal of x_0");
    panel.x_label = d == 1 ? "x" : "x_0";
    panel.y_label = "density";
    panel.curves.push_back({d == 1 ? "grid density rho_t" : "marginal of rho_t",
                            p.cell_centres,
                            p.density,
                            {},
                            Curve::Style::line,
                            0});
    panel.curves.push_back(
        {"particle histogram", p.bin_centres, p.histogram, {}, Curve::Style::steps, 1});
    figure.panels.push_back(panel);
  }
  draw_figure(figure);
  plot_observables(dir + "side_by_side.csv", dir + "energies.png",
                   {"particle_energy_external", "grid_energy_external",
                    "particle_energy_interaction", "grid_energy_interaction"},
                   title + ": energy terms", "energy", false);
}

void run_side_by_side(const RunConfig& config, const CommandOptions& options,
                      const RankGroup& ranks) {
  std::unique_ptr<SideBySideRun> run;
  ranks.agree([&] {  // validates every input before anything is written
    restore_fft_plans(options.restart);
    run = std::make_unique<SideBySideRun>(config, ranks);
  });
  run_loop(config, options, *run);
}

}  // namespace cpm

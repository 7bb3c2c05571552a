#include "experiments/run/particle_run.hpp"

#include "core/initial_law.hpp"
#include "core/observables.hpp"
#include "experiments/run/run_output.hpp"

namespace cpm {

ParticleRun::ParticleRun(const RunConfig& config)
    : config_(config),
      system_(build_particle_system(particle_system_spec(config), 0)),
      particles_(sample_particles(config.initial, config.n, config.seed, 0)) {
  config.domain.project_all(particles_.positions);
}

void ParticleRun::restore(const Checkpoint& checkpoint) {
  particles_.positions = checkpoint.positions;
  system_.integrator->restore_state(checkpoint.state.solver_state);
  time_ = checkpoint.state.time;
}

std::vector<std::string> ParticleRun::columns() const {
  const int d = config_.domain.dim();
  std::vector<std::string> c = {"time", "energy_external", "energy_interaction", "energy_total",
                                "radial_extent"};
  for (int a = 0; a < d; ++a) c.push_back("mean_" + std::to_string(a));
  for (int a = 0; a < d; ++a)
    for (int b = a; b < d; ++b) c.push_back("cov_" + std::to_string(a) + std::to_string(b));
  return c;
}

std::vector<double> ParticleRun::measure() {
  const Eigen::MatrixXd& x = particles_.positions;
  const int d = config_.domain.dim();
  const EnergyTerms e = system_.forces->energy(x);
  const Eigen::VectorXd mean = ensemble_mean(x);
  const Eigen::MatrixXd cov = ensemble_covariance(x);
  std::vector<double> row = {time_, e.external, e.interaction, e.total(),
                             radial_extent(x, config_.domain.centre())};
  for (int a = 0; a < d; ++a) row.push_back(mean[a]);
  for (int a = 0; a < d; ++a)
    for (int b = a; b < d; ++b) row.push_back(cov(a, b));
  return row;
}

void ParticleRun::draw_figures(const std::string& dir) const {
  plot_observables(dir + "observables.csv", dir + "observables.png",
                   {"energy_external", "energy_interaction", "energy_total", "radial_extent"},
                   "particles (N = " + std::to_string(config_.n) + "): energies and extent",
                   "value", false);
}

void run_particles(const RunConfig& config, const RunOptions& options) {
  restore_fft_plans(options.restart);  // the mesh sum's FFT plans, as the run it continues
  ParticleRun run(config);
  run_loop(config, options, run);
}

}  // namespace cpm

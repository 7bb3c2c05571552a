#include "experiments/run/particle_run.hpp"

#include <memory>

#include "core/initial_law.hpp"
#include "experiments/run/run_output.hpp"
#include "parallel/ensemble_reductions.hpp"

namespace cpm {

namespace {

ParticleSystemSpec spread_spec(const RunConfig& config, const RankGroup& ranks) {
  ParticleSystemSpec spec = particle_system_spec(config);
  spec.ranks = ranks;
  return spec;
}

Particles initial_particles(const RunConfig& config, const RankGroup& ranks) {
  if (!ranks.spread()) return sample_particles(config.initial, config.n, config.seed, 0);
  const IdRange share = ranks.share(static_cast<std::uint64_t>(config.n));
  return sample_particle_ids(config.initial, share.first, static_cast<Eigen::Index>(share.count),
                             config.seed, 0);
}

}  // namespace

ParticleRun::ParticleRun(const RunConfig& config, RankGroup ranks)
    : config_(config),
      ranks_(ranks),
      system_(build_particle_system(spread_spec(config, ranks), 0)),
      particles_(initial_particles(config, ranks)) {
  config.domain.project_all(particles_.positions);
  system_.forces->redistribute(particles_);  // over ranks: each particle to its slab's rank
}

void ParticleRun::restore(const Checkpoint& checkpoint) {
  // The checkpoint holds every particle in id order, whatever the ranks that wrote it: each rank
  // takes its block of ids again, then the particles move to their slabs.
  if (ranks_.spread()) {
    particles_ = ranks_.id_block(checkpoint.positions);
    system_.forces->redistribute(particles_);
  } else {
    particles_.positions = checkpoint.positions;
  }
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
  const Eigen::VectorXd mean = ensemble_mean(x, ranks_);
  const Eigen::MatrixXd cov = ensemble_covariance(x, mean, ranks_);
  std::vector<double> row = {time_, e.external, e.interaction, e.total(),
                             radial_extent(x, config_.domain.centre(), ranks_)};
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

void run_particles(const RunConfig& config, const CommandOptions& options, const RankGroup& ranks) {
  std::unique_ptr<ParticleRun> run;
  ranks.agree([&] {
    restore_fft_plans(options.restart);  // the mesh sum's FFT plans, as the run it continues
    run = std::make_unique<ParticleRun>(config, ranks);
  });
  run_loop(config, options, *run);
}

}  // namespace cpm

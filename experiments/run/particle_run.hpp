#pragma once
// `cpm run` without a [grid] section: the particle system evolves from its initial law (or from
// a checkpoint) and records its energy terms, radial extent, mean and covariance. Spread over MPI
// ranks, each rank holds a contiguous block of the particle ids (docs/distributed.md §4).
#include <string>
#include <vector>

#include "config/run_config.hpp"
#include "experiments/model_builder.hpp"
#include "experiments/run/run_loop.hpp"

namespace cpm {

class ParticleRun final : public RunSystem {
 public:
  explicit ParticleRun(const RunConfig& config, RankGroup ranks = {});

  double advance_to(double t) override {
    ParticleIntegrator& integrator = *system_.integrator;
    integrator.advance_to(particles_, t);
    time_ = integrator.stopped() ? integrator.time() : t;
    return time_;
  }
  void restore(const Checkpoint& checkpoint) override;
  IntegratorState save_state() const override { return system_.integrator->save_state(); }
  std::vector<std::string> columns() const override;
  std::vector<double> measure() override;
  std::string headline() const override { return "energy_total"; }
  std::string table_name() const override { return "observables.csv"; }
  Particles& particles() override { return particles_; }
  ForceField& forces() override { return *system_.forces; }
  ParticleIntegrator& particle_integrator() override { return *system_.integrator; }
  void draw_figures(const std::string& directory) const override;
  const RankGroup& ranks() const override { return ranks_; }

 private:
  RunConfig config_;
  RankGroup ranks_;
  ParticleSystem system_;
  Particles particles_;
  double time_ = 0.0;  // the time advanced to (the integrator's clock may differ in the last bit)
};

// Writes into config.output.directory: observables.csv (one row per output time), run.h5
// (H5MD), run.pvd (ParaView), observables.png and run_info.txt. Over several ranks (collective)
// the first rank writes them, from the particles gathered there at each output time.
void run_particles(const RunConfig& config, const CommandOptions& options,
                   const RankGroup& ranks = {});

}  // namespace cpm

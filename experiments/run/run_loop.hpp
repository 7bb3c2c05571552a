#pragma once
// The one loop of `cpm run`, shared by the particle-only run and the side-by-side run with the grid
// solver: restore from a checkpoint if asked, prepare the output folder, write run_info.txt, then
// at every output time advance, check that the particles stayed finite, record a row of the table,
// write the frame (run.h5, run.pvd) and report progress, and finally draw the figures. A stop
// signal (SIGINT/SIGTERM) is answered at the next particle step: the loop writes a last frame at
// that time, whose checkpoint `--restart` continues from, and throws StopRequested. Inside an
// output interval the progress line shows, every few seconds, the integrator's time, step size and
// steps (a minimiser's iterations and projected-gradient norm). A system spread over MPI ranks
// (RunSystem::ranks) runs the loop on every rank; the first rank writes the files from the
// particles gathered on it, and a failure on any rank stops every rank (AgreedFailure).
#include <string>
#include <vector>

#include "config/run_config.hpp"
#include "core/grid.hpp"
#include "core/particles.hpp"
#include "experiments/command_options.hpp"
#include "io/h5md_reader.hpp"
#include "parallel/rank_group.hpp"
#include "solvers/force_field.hpp"
#include "solvers/particle_integrator.hpp"

namespace cpm {

// What a run evolves and records. Constructing one validates every input; nothing is written
// before the loop starts.
class RunSystem {
 public:
  virtual ~RunSystem() = default;

  // Advances to t, or less far when the particle integrator's stop check (set by the loop)
  // answers true: returns the time reached.
  virtual double advance_to(double t) = 0;
  // Continues from a checkpoint of the same configuration, and the state a checkpoint stores.
  virtual void restore(const Checkpoint& checkpoint) = 0;
  virtual IntegratorState save_state() const = 0;

  // The table's columns (time first) and the row at the current time.
  virtual std::vector<std::string> columns() const = 0;
  virtual std::vector<double> measure() = 0;
  // The column the progress line shows, and the table's file name.
  virtual std::string headline() const = 0;
  virtual std::string table_name() const = 0;

  virtual Particles& particles() = 0;
  virtual ForceField& forces() = 0;
  virtual ParticleIntegrator& particle_integrator() = 0;
  // The grid of a frame's fields and the fields, or nulls for a particle-only run.
  virtual const Grid* field_grid() const { return nullptr; }
  virtual const std::vector<double>* density() const { return nullptr; }
  virtual const std::vector<double>* potential() const { return nullptr; }
  // Before each frame, on every rank: a run spread over ranks gathers the fields above on the
  // first rank (collective).
  virtual void gather_fields() {}
  // Lines run_info.txt adds for this kind of run ("key = value\n" each).
  virtual std::string info() const { return ""; }
  // The figures of the finished run, drawn from its table in `directory`.
  virtual void draw_figures(const std::string& directory) const = 0;
  // The ranks that hold the particles between them (particles() is this rank's share).
  virtual const RankGroup& ranks() const {
    static const RankGroup one_process;
    return one_process;
  }
};

void run_loop(const RunConfig& config, const CommandOptions& options, RunSystem& run);

// Plots `columns` of a run's table against time into `png` (viz/plot.hpp: a figure that cannot
// be drawn is a warning).
void plot_observables(const std::string& csv, const std::string& png,
                      const std::vector<std::string>& columns, const std::string& title,
                      const std::string& y_label, bool log_y);

}  // namespace cpm

#include "experiments/run/run_loop.hpp"

#include <algorithm>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "core/stop_request.hpp"
#include "experiments/run/minimization_report.hpp"
#include "experiments/run/run_output.hpp"
#include "experiments/run/run_restart.hpp"
#include "io/csv_table.hpp"
#include "io/number_format.hpp"
#include "io/output_directory.hpp"
#include "io/progress.hpp"
#include "viz/plot.hpp"

namespace cpm {

namespace {

// run_info.txt and config.toml in the prepared output folder.
void write_run_description(const RunConfig& config, const CommandOptions& options, RunSystem& run) {
  const std::string dir = config.output.directory + "/";
  std::ofstream(dir + "run_info.txt")
      << "config = " << config.source << "\ninteraction = " << config.interaction.kernel.describe()
      << "\ninteraction_method = " << run.forces().interaction().name() << '\n'
      << (run.ranks().spread() ? "mpi_ranks = " + std::to_string(run.ranks().size()) + "\n" : "")
      << run.info() << (options.restart.empty() ? "" : "restart = " + options.restart + "\n")
      << provenance_lines();
  std::ofstream(dir + "config.toml") << resolved_run_config(
      config, options.restart.empty() ? ""
                                      : "Continued from " + options.restart + ": add --restart " +
                                            options.restart + ".");
}

// What the first rank writes: the table, run.h5 and run.pvd, the progress line.
struct RunFiles {
  RunFiles(const RunConfig& config, const CommandOptions& options, RunSystem& run,
           const std::vector<std::string>& columns)
      : table(config.output.directory + "/" + run.table_name(), columns),
        output(config, run.field_grid(), options.overwrite),
        progress(run.field_grid() ? "cpm run (particles and grid)" : "cpm run",
                 config.dynamics.t_end, options.progress) {}
  CsvTable table;
  RunOutput output;
  Progress progress;
};

}  // namespace

void run_loop(const RunConfig& config, const CommandOptions& options, RunSystem& run) {
  // SIGINT/SIGTERM: stop at the next particle step. Installed on every rank before the first
  // agreement, so a signal to the ranks once the run's files exist never finds one without it.
  const StopRequestHandler stop_handler;
  const RankGroup& ranks = run.ranks();
  double start = 0.0;
  ranks.agree([&] {
    start = restore_from(config, options.restart,
                         [&](const Checkpoint& checkpoint) { run.restore(checkpoint); });
  });
  const std::string dir = config.output.directory + "/";
  const std::vector<std::string> columns = run.columns();
  const std::vector<std::string> observables(columns.begin() + 1, columns.end());  // not time
  const std::size_t headline =
      std::find(columns.begin(), columns.end(), run.headline()) - columns.begin();
  std::unique_ptr<RunFiles> files;
  ranks.agree([&] {
    if (!ranks.first()) return;
    prepare_output_directory(config.output.directory, options.overwrite);
    write_run_description(config, options, run);
    files = std::make_unique<RunFiles>(config, options, run, columns);
  });
  ParticleIntegrator& integrator = run.particle_integrator();
  if (files)
    integrator.set_observer([&](const IntegratorProgress& p) {
      Progress& progress = files->progress;
      if (!progress.heartbeat_due()) return;
      progress.heartbeat(p.time, p.residual >= 0.0
                                     ? "iteration=" + std::to_string(p.steps) +
                                           " gradient_norm=" + format_number(p.residual)
                                     : "t=" + format_number(p.time, 6) +
                                           " step=" + format_number(p.step) +
                                           " steps=" + std::to_string(p.steps));
    });
  Eigen::MatrixXd drift, gathered_positions, gathered_drift;
  // Asked after every step on every rank (the ranks step together): all stop at the same step.
  integrator.set_stop_check([&] { return ranks.max(stop_signal()) != 0; });
  for (const double output_time : output_times(config.dynamics, start)) {
    const double t = run.advance_to(output_time);
    const bool finite = ranks.all(run.particles().positions.allFinite());
    ranks.agree([&] {
      if (!finite && ranks.first())
        throw std::runtime_error(
            "particle positions became non-finite before t = " + std::to_string(t) +
            " (singular kernel with too large a step: reduce dynamics.step, or use integrator = "
            "\"implicit_langevin\", or \"minimize\" for the equilibrium at beta = inf)");
    });
    const std::vector<double> row = run.measure();
    run.forces().compute(run.particles().positions, drift, nullptr);
    // The frame holds every particle in id order and the whole grid's fields: gathered on the
    // first rank when spread.
    run.gather_fields();
    const Eigen::MatrixXd* positions = &run.particles().positions;
    const Eigen::MatrixXd* frame_drift = &drift;
    if (ranks.spread()) {
      ranks.gather_by_id(run.particles().ids, *positions, gathered_positions);
      ranks.gather_by_id(run.particles().ids, drift, gathered_drift);
      positions = &gathered_positions;
      frame_drift = &gathered_drift;
    }
    const IntegratorState state = run.save_state();
    ranks.agree([&] {
      if (!files) return;
      files->table.add_row(row);
      files->output.write_frame(static_cast<std::int64_t>(integrator.steps_taken()), t, *positions,
                                *frame_drift, observables,
                                std::vector<double>(row.begin() + 1, row.end()), run.density(),
                                run.potential(), state);
      files->progress.update(t, "t=" + format_number(t) + " " + columns[headline] + "=" +
                                    format_number(row[headline]));
    });
    const int signal = static_cast<int>(ranks.max(stop_signal()));
    ranks.agree([&] {
      if (signal != 0 && t < config.dynamics.t_end && ranks.first()) {
        integrator.set_observer({});
        integrator.set_stop_check({});
        throw StopRequested(
            signal, "run.h5 holds every frame up to t = " + format_number(t) +
                        "; continue with: " + (ranks.spread() ? "mpirun " : "") + "cpm run" +
                        (config.source == "embedded default" ? "" : " " + config.source) +
                        " --restart " + dir + "run.h5 --output <new folder>");
      }
    });
  }
  integrator.set_observer({});
  integrator.set_stop_check({});
  if (!files) return;
  const auto* minimizer = dynamic_cast<const MinimizerIntegrator*>(&integrator);
  const std::string summary = minimizer ? write_minimization_report(*minimizer, dir) + " " : "";
  files->progress.finish(summary + "output in " + config.output.directory);
  run.draw_figures(dir);
  if (minimizer) draw_minimization_figure(dir);
}

void plot_observables(const std::string& csv, const std::string& png,
                      const std::vector<std::string>& columns, const std::string& title,
                      const std::string& y_label, bool log_y) {
  draw_figure({png, title, {table_panel(csv, "time", columns, y_label, log_y)}});
}

}  // namespace cpm

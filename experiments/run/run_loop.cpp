#include "experiments/run/run_loop.hpp"

#include <algorithm>
#include <fstream>
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

void run_loop(const RunConfig& config, const RunOptions& options, RunSystem& run) {
  const double start = restore_from(config, options.restart,
                                    [&](const Checkpoint& checkpoint) { run.restore(checkpoint); });
  prepare_output_directory(config.output.directory, options.overwrite);
  const std::string dir = config.output.directory + "/";
  std::ofstream(dir + "run_info.txt")
      << "config = " << config.source << "\ninteraction = " << config.interaction.kernel.describe()
      << "\ninteraction_method = " << run.forces().interaction().name() << '\n'
      << run.info() << (options.restart.empty() ? "" : "restart = " + options.restart + "\n")
      << provenance_lines();
  std::ofstream(dir + "config.toml") << resolved_run_config(
      config, options.restart.empty() ? ""
                                      : "Continued from " + options.restart + ": add --restart " +
                                            options.restart + ".");

  const std::vector<std::string> columns = run.columns();
  const std::vector<std::string> observables(columns.begin() + 1, columns.end());  // not time
  const std::size_t headline =
      std::find(columns.begin(), columns.end(), run.headline()) - columns.begin();
  CsvTable table(dir + run.table_name(), columns);
  RunOutput output(config, run.field_grid(), options.overwrite);  // run.h5 (H5MD) and run.pvd
  Progress progress(run.field_grid() ? "cpm run (particles and grid)" : "cpm run",
                    config.dynamics.t_end, options.progress);
  ParticleIntegrator& integrator = run.particle_integrator();
  integrator.set_observer([&](const IntegratorProgress& p) {
    if (!progress.heartbeat_due()) return;
    progress.heartbeat(p.time, p.residual >= 0.0 ? "iteration=" + std::to_string(p.steps) +
                                                       " gradient_norm=" + format_number(p.residual)
                                                 : "t=" + format_number(p.time, 6) +
                                                       " step=" + format_number(p.step) +
                                                       " steps=" + std::to_string(p.steps));
  });
  Eigen::MatrixXd drift;
  const StopRequestHandler stop_handler;  // SIGINT/SIGTERM: stop after the next frame
  for (const double t : output_times(config.dynamics, start)) {
    run.advance_to(t);
    if (!run.particles().positions.allFinite())
      throw std::runtime_error(
          "particle positions became non-finite before t = " + std::to_string(t) +
          " (singular kernel with too large a step: reduce dynamics.step, or use "
          "integrator = \"implicit_langevin\", or \"minimize\" for the equilibrium at beta = inf)");
    const std::vector<double> row = run.measure();
    table.add_row(row);
    run.forces().compute(run.particles().positions, drift, nullptr);
    output.write_frame(static_cast<std::int64_t>(run.particle_integrator().steps_taken()), t,
                       run.particles().positions, drift, observables,
                       std::vector<double>(row.begin() + 1, row.end()), run.density(),
                       run.potential(), run.save_state());
    progress.update(
        t, "t=" + format_number(t) + " " + columns[headline] + "=" + format_number(row[headline]));
    if (const int signal = stop_signal(); signal != 0 && t < config.dynamics.t_end) {
      integrator.set_observer({});
      throw StopRequested(signal,
                          "run.h5 holds every frame up to t = " + format_number(t) +
                              "; continue with: cpm run" +
                              (config.source == "embedded default" ? "" : " " + config.source) +
                              " --restart " + dir + "run.h5 --output <new folder>");
    }
  }
  integrator.set_observer({});
  const auto* minimizer = dynamic_cast<const MinimizerIntegrator*>(&integrator);
  const std::string summary = minimizer ? write_minimization_report(*minimizer, dir) + " " : "";
  progress.finish(summary + "output in " + config.output.directory);
  run.draw_figures(dir);
  if (minimizer) draw_minimization_figure(dir);
}

void plot_observables(const std::string& csv, const std::string& png,
                      const std::vector<std::string>& columns, const std::string& title,
                      const std::string& y_label, bool log_y) {
  draw_figure({png, title, {table_panel(csv, "time", columns, y_label, log_y)}});
}

}  // namespace cpm

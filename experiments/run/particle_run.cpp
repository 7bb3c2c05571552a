#include "experiments/run/particle_run.hpp"

#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "core/initial_law.hpp"
#include "core/observables.hpp"
#include "experiments/model_builder.hpp"
#include "experiments/run/run_output.hpp"
#include "experiments/run/run_restart.hpp"
#include "io/csv_table.hpp"
#include "io/output_directory.hpp"
#include "io/progress.hpp"
#include "viz/gnuplot_plot.hpp"

namespace cpm {

namespace {

std::vector<std::string> observable_columns(int d) {
  std::vector<std::string> c = {"time", "energy_external", "energy_interaction", "energy_total",
                                "radial_extent"};
  for (int a = 0; a < d; ++a) c.push_back("mean_" + std::to_string(a));
  for (int a = 0; a < d; ++a)
    for (int b = a; b < d; ++b) c.push_back("cov_" + std::to_string(a) + std::to_string(b));
  return c;
}

}  // namespace

void plot_observables(const std::string& csv, const std::string& png,
                      const std::vector<std::string>& columns, const std::string& title,
                      const std::string& y_label, bool log_y) {
  TimeSeriesPlot plot;
  plot.csv = csv;
  plot.png = png;
  plot.y_columns = columns;
  plot.log_y = log_y;
  plot.title = title;
  plot.y_label = y_label;
  try {
    plot_time_series(plot);
  } catch (const std::runtime_error& e) {
    std::cerr << "cpm: no plot " << png << ": " << e.what() << '\n';
  }
}

void run_particles(const RunConfig& config, const RunOptions& options) {
  const int d = config.domain.dim();
  Particles particles = sample_particles(config.initial, config.n, config.seed, 0);
  config.domain.project_all(particles.positions);
  auto forces = make_force_field(config);
  auto integrator = make_integrator(config, *forces, 0);
  const double start = restore_from(config, options.restart, [&](const Checkpoint& checkpoint) {
    particles.positions = checkpoint.positions;
    integrator->restore_state(checkpoint.state.solver_state);
  });

  prepare_output_directory(config.output.directory, options.overwrite);
  const std::string dir = config.output.directory + "/";
  std::ofstream(dir + "run_info.txt")
      << "config = " << config.source << "\ninteraction = " << config.interaction.kernel.describe()
      << "\ninteraction_method = " << forces->interaction().name()
      << (options.restart.empty() ? "" : "\nrestart = " + options.restart) << '\n';

  const std::vector<std::string> columns = observable_columns(d);
  const std::vector<std::string> observables(columns.begin() + 1, columns.end());  // not time
  CsvTable table(dir + "observables.csv", columns);
  RunOutput output(config, nullptr, options.overwrite);  // run.h5 (H5MD) and run.pvd
  Progress progress("cpm run", config.dynamics.t_end, options.progress);
  const Eigen::VectorXd centre = config.domain.centre();
  Eigen::MatrixXd drift;
  for (const double t : output_times(config.dynamics, start)) {
    integrator->advance_to(particles, t);
    if (!particles.positions.allFinite())
      throw std::runtime_error(
          "particle positions became non-finite before t = " + std::to_string(t) +
          " (singular kernel with too large a step: reduce dynamics.step, or "
          "use the mollified kernel with noise)");
    const EnergyTerms e = forces->energy(particles.positions);
    const Eigen::VectorXd mean = ensemble_mean(particles.positions);
    const Eigen::MatrixXd cov = ensemble_covariance(particles.positions);
    std::vector<double> row = {t, e.external, e.interaction, e.total(),
                               radial_extent(particles.positions, centre)};
    for (int a = 0; a < d; ++a) row.push_back(mean[a]);
    for (int a = 0; a < d; ++a)
      for (int b = a; b < d; ++b) row.push_back(cov(a, b));
    table.add_row(row);
    forces->compute(particles.positions, drift, nullptr);
    output.write_frame(static_cast<std::int64_t>(integrator->steps_taken()), t, particles.positions,
                       drift, observables, std::vector<double>(row.begin() + 1, row.end()), nullptr,
                       nullptr, integrator->save_state());
    std::ostringstream detail;
    detail << "t=" << t << " E=" << e.total();
    progress.update(t, detail.str());
  }
  progress.finish("output in " + config.output.directory);
  plot_observables(dir + "observables.csv", dir + "observables.png",
                   {"energy_external", "energy_interaction", "energy_total", "radial_extent"},
                   "particles (N = " + std::to_string(config.n) + "): energies and extent", "value",
                   false);
}

}  // namespace cpm

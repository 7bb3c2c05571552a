#include "experiments/particle_run.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "core/initial_law.hpp"
#include "core/observables.hpp"
#include "experiments/model_builder.hpp"
#include "io/csv_table.hpp"
#include "io/output_directory.hpp"
#include "io/progress.hpp"

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

void write_particle_snapshot(const std::string& path, const Particles& p) {
  std::ofstream out(path);
  out << std::setprecision(17);
  for (Eigen::Index a = 0; a < p.dim(); ++a) out << (a ? "," : "") << "x" << a;
  out << '\n';
  for (Eigen::Index k = 0; k < p.size(); ++k) {
    for (Eigen::Index a = 0; a < p.dim(); ++a) out << (a ? "," : "") << p.positions(k, a);
    out << '\n';
  }
}

void run_particles(const RunConfig& config, const RunOptions& options) {
  prepare_output_directory(config.output.directory, options.overwrite);
  const std::string dir = config.output.directory + "/";
  const int d = config.domain.dim();

  Particles particles = sample_particles(config.initial, config.n, config.seed, 0);
  config.domain.project_all(particles.positions);
  auto forces = make_force_field(config);
  auto integrator = make_integrator(config, *forces, 0);
  std::ofstream(dir + "run_info.txt")
      << "config = " << config.source << "\ninteraction = " << config.interaction.kernel.describe()
      << "\ninteraction_method = " << forces->interaction().name() << '\n';

  CsvTable table(dir + "observables.csv", observable_columns(d));
  Progress progress("cpm run", config.dynamics.t_end, options.progress);
  const Eigen::VectorXd centre = config.domain.centre();
  for (int k = 0; k <= config.dynamics.outputs; ++k) {
    const double t = config.dynamics.t_end * k / config.dynamics.outputs;
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
    std::ostringstream name;
    name << dir << "particles_" << std::setw(4) << std::setfill('0') << k << ".csv";
    write_particle_snapshot(name.str(), particles);
    std::ostringstream detail;
    detail << "t=" << t << " E=" << e.total();
    progress.update(t, detail.str());
  }
  progress.finish("output in " + config.output.directory);
}

}  // namespace cpm

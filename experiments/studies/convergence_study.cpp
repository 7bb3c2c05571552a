#include "experiments/studies/convergence_study.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <numbers>
#include <optional>

#include "core/empirical_distances.hpp"
#include "experiments/model_builder.hpp"
#include "experiments/run/run_output.hpp"
#include "io/csv_table.hpp"
#include "io/hdf5_table.hpp"
#include "io/number_format.hpp"
#include "io/output_directory.hpp"
#include "io/progress.hpp"
#include "solvers/grid_density.hpp"
#include "viz/plot.hpp"

namespace cpm {

namespace {

// The distances of one particle configuration to a grid density, in the order of c.metrics.
struct MetricContext {
  const ConvergenceConfig& config;
  const Grid& grid;
  Eigen::MatrixXd directions;
  double bandwidth;
};

void measure(const MetricContext& m, const Eigen::MatrixXd& x, const std::vector<double>& density,
             double energy_error, double* out) {
  std::optional<Wasserstein1D> w;
  for (std::size_t i = 0; i < m.config.metrics.size(); ++i) {
    switch (m.config.metrics[i]) {
      case ConvergenceDistance::w1:
      case ConvergenceDistance::w2:
        if (!w) w = wasserstein_1d(x.col(0), m.grid, density);
        out[i] = m.config.metrics[i] == ConvergenceDistance::w1 ? w->w1 : w->w2;
        break;
      case ConvergenceDistance::sw2:
        out[i] = sliced_wasserstein2(x, m.grid, density, m.directions);
        break;
      case ConvergenceDistance::mmd:
        out[i] = mmd_gaussian(x, m.grid, density, m.bandwidth);
        break;
      case ConvergenceDistance::l1:
        out[i] = histogram_l1(x, m.grid, density);
        break;
      case ConvergenceDistance::energy:
        out[i] = energy_error;
        break;
    }
  }
}

MetricSummary summarise(const std::vector<double>& v) {
  MetricSummary s;
  const double n = static_cast<double>(v.size());
  for (double x : v) s.mean += x / n;
  for (double x : v) s.std += (x - s.mean) * (x - s.mean) / (n - 1);
  s.std = std::sqrt(s.std);
  s.standard_error = s.std / std::sqrt(n);
  return s;
}

// The constant of the 1D i.i.d. floor E W1 ≈ C/√N, C = √(2/π) ∫ √(F(1 − F)) dx
// (docs/exact_solutions.md §4), for the piecewise-constant density (F linear in each cell).
double w1_floor_constant(const Grid& grid, const std::vector<double>& density) {
  const double h = grid.spacing(0), mass = density_mass(grid, density);
  double integral = 0, f = 0;
  for (Eigen::Index c = 0; c < grid.size(); ++c) {
    const double next = f + h * density[c] / mass;
    for (int q = 0; q < 8; ++q) {  // midpoint rule inside the cell
      const double fq = f + (next - f) * (q + 0.5) / 8;
      integral += h / 8 * std::sqrt(std::max(0.0, fq * (1 - fq)));
    }
    f = next;
  }
  return std::sqrt(2.0 / std::numbers::pi) * integral;
}

// The model's parameters (as in run.h5, without particles.n) and the study's own.
ParameterSet study_parameters(const ConvergenceConfig& c) {
  ParameterSet p = run_parameters(c.model);
  p.erase("particles.n");
  p.set("convergence.ns", std::vector<double>(c.ns.begin(), c.ns.end()));
  p.set("convergence.replicas", static_cast<std::int64_t>(c.replicas));
  std::string metrics;
  for (const auto& m : c.metrics) metrics += (metrics.empty() ? "" : " ") + name_of(m);
  p.set("convergence.metrics", metrics);
  p.set("convergence.bootstrap", static_cast<std::int64_t>(c.bootstrap));
  p.set("convergence.confidence", c.confidence);
  return p;
}

// One panel per metric at the final time: mean ± standard error over the replicas, the fitted
// rate (dashed) with its slope and interval in the key, and the i.i.d. floor (dotted), all in the
// metric's colour; N^{-1/2} through the first point for reference.
Figure convergence_figure(const ConvergenceConfig& c, const ConvergenceResult& r,
                          const std::string& png) {
  const std::vector<double> ns(c.ns.begin(), c.ns.end());
  const std::size_t last = r.times.size() - 1;
  Figure figure{png, "particles against the PDE at t = " + format_number(r.times[last]), {}, 0};
  for (std::size_t m = 0; m < c.metrics.size(); ++m) {
    Panel p;
    p.title = name_of(c.metrics[m]);
    p.x_label = "N";
    p.y_label = "distance";
    p.log_x = p.log_y = true;
    Curve mean{name_of(c.metrics[m]) + " (mean ± SE)", ns, {}, {}, Curve::Style::lines_points, 0};
    Curve floor{"i.i.d. floor", ns, {}, {}, Curve::Style::dotted, 0};
    for (std::size_t i = 0; i < ns.size(); ++i) {
      mean.y.push_back(r.summary[i][last][m].mean);
      mean.error.push_back(r.summary[i][last][m].standard_error);
      floor.y.push_back(r.floor[i][m].mean);
    }
    p.curves.push_back(mean);
    if (!r.rates.empty()) {
      const RateFit& fit = r.rates[m];
      Curve line{"fit: slope " + format_number(fit.slope) + " [" + format_number(fit.slope_low) +
                     ", " + format_number(fit.slope_high) + "]",
                 ns,
                 {},
                 {},
                 Curve::Style::dashed,
                 0};
      for (double n : ns) line.y.push_back(std::exp(fit.intercept) * std::pow(n, fit.slope));
      p.curves.push_back(line);
    }
    p.curves.push_back(floor);
    Curve reference{"N^-1/2", ns, {}, {}, Curve::Style::dotted, 6};
    for (double n : ns) reference.y.push_back(mean.y.front() * std::sqrt(ns.front() / n));
    p.curves.push_back(reference);
    figure.panels.push_back(p);
  }
  return figure;
}

}  // namespace

ConvergenceResult run_convergence_study(const MpiEnvironment& mpi, const ConvergenceConfig& c,
                                        const CommandOptions& options) {
  const ReplicaRecovery recovery{"converge", c.model.source, c.model.output.directory,
                                 options.restart};
  if (mpi.is_root())
    prepare_output_directory(c.model.output.directory,
                             options.overwrite || continues_in_place(recovery));

  // The PDE is solved once (on every rank: it is deterministic and cheap beside the replicas).
  const Grid grid = make_grid(c.model);
  const auto potential = make_potential(c.model.potential);
  auto solver = make_grid_solver(c.model, grid, *potential);
  const std::vector<double> initial_density = solver->density();
  const int outputs = c.model.dynamics.outputs;
  ConvergenceResult result;
  std::vector<std::vector<double>> densities;
  std::vector<double> grid_energy;
  {
    Progress pde("cpm converge: grid solver", c.model.dynamics.t_end,
                 options.progress && mpi.is_root());
    for (int k = 0; k <= outputs; ++k) {
      const double t = c.model.dynamics.t_end * k / outputs;
      solver->advance_to(t);
      result.times.push_back(t);
      densities.push_back(solver->density());
      const GridEnergy e = solver->energy();
      grid_energy.push_back(e.external + e.interaction);
      pde.update(t);
    }
    pde.finish();
  }

  const GridConfig& g = *c.model.grid;
  const double smallest_side = (grid.upper() - grid.lower()).minCoeff();
  const MetricContext context{c, grid, slicing_directions(grid.dim(), g.directions),
                              g.mmd_bandwidth > 0 ? g.mmd_bandwidth : smallest_side / 20};
  const int metrics = static_cast<int>(c.metrics.size());
  const int times = outputs + 1;
  const int width = times * metrics + metrics;  // the replica's distances, then its floor
  const int total = static_cast<int>(c.ns.size()) * c.replicas;

  const Eigen::MatrixXd table = run_replicas(
      mpi, total, width,
      [&](int id, double* row) {
        RunConfig model = c.model;
        model.n = c.ns[id / c.replicas];
        const auto replica = static_cast<std::uint64_t>(id);
        Particles particles =
            sample_initial_particles(model, grid, initial_density, model.n, replica);
        const ParticleSystem system = build_particle_system(particle_system_spec(model), replica);
        for (int k = 0; k < times; ++k) {
          system.integrator->advance_to(particles, result.times[k]);
          const EnergyTerms e = system.forces->energy(particles.positions);
          measure(context, particles.positions, densities[k],
                  std::abs(e.external + e.interaction - grid_energy[k]), row + k * metrics);
        }
        // The floor: N i.i.d. draws from ρ_T (streams of replica total + id, unused above).
        const Particles iid = sample_from_density(grid, densities.back(), model.n, model.seed,
                                                  static_cast<std::uint64_t>(total + id));
        const EnergyTerms e = system.forces->energy(iid.positions);
        measure(context, iid.positions, densities.back(),
                std::abs(e.external + e.interaction - grid_energy.back()), row + times * metrics);
      },
      options.progress ? "cpm converge: particles" : "", recovery);
  if (!mpi.is_root()) return {};

  // Summaries, rates, files.
  const std::size_t nn = c.ns.size();
  result.summary.assign(nn, std::vector<std::vector<MetricSummary>>(times));
  result.floor.assign(nn, {});
  std::vector<std::vector<std::vector<double>>> final_samples(metrics), floor_samples(metrics);
  for (std::size_t i = 0; i < nn; ++i) {
    for (int col = 0; col < width; ++col) {
      std::vector<double> v(c.replicas);
      for (int r = 0; r < c.replicas; ++r) v[r] = table(i * c.replicas + r, col);
      const int k = col / metrics, m = col % metrics;
      if (k < times) {
        result.summary[i][k].push_back(summarise(v));
        if (k == times - 1) final_samples[m].push_back(v);
      } else {
        result.floor[i].push_back(summarise(v));
        floor_samples[m].push_back(v);
      }
    }
  }
  const std::vector<double> ns(c.ns.begin(), c.ns.end());
  const std::string dir = c.model.output.directory + "/";
  std::ofstream rates(dir + "convergence_rates.csv");
  rates << "metric,slope,slope_low,slope_high,floor_slope,floor_slope_low,floor_slope_high\n"
        << std::setprecision(10);
  for (int m = 0; m < metrics && nn >= 2; ++m) {
    result.rates.push_back(fit_rate(ns, final_samples[m], c.bootstrap, c.confidence, c.model.seed));
    result.floor_rates.push_back(
        fit_rate(ns, floor_samples[m], c.bootstrap, c.confidence, c.model.seed + 1));
    const RateFit& a = result.rates.back();
    const RateFit& b = result.floor_rates.back();
    rates << name_of(c.metrics[m]) << ',' << a.slope << ',' << a.slope_low << ',' << a.slope_high
          << ',' << b.slope << ',' << b.slope_low << ',' << b.slope_high << '\n';
  }

  std::vector<std::string> columns = {"n", "time"};
  for (const auto& m : c.metrics)
    for (const char* s : {"_mean", "_std", "_se", "_floor_mean", "_floor_se"})
      columns.push_back(name_of(m) + s);
  if (grid.dim() == 1) columns.push_back("w1_floor_theory");
  std::vector<std::vector<double>> rows;
  const double floor_constant = grid.dim() == 1 ? w1_floor_constant(grid, densities.back()) : 0.0;
  for (std::size_t i = 0; i < nn; ++i)
    for (int k = 0; k < times; ++k) {
      std::vector<double> row = {ns[i], result.times[k]};
      for (int m = 0; m < metrics; ++m) {
        const MetricSummary& s = result.summary[i][k][m];
        const bool last = k == times - 1;
        const double nan = std::numeric_limits<double>::quiet_NaN();
        row.insert(row.end(),
                   {s.mean, s.std, s.standard_error, last ? result.floor[i][m].mean : nan,
                    last ? result.floor[i][m].standard_error : nan});
      }
      if (grid.dim() == 1) row.push_back(floor_constant / std::sqrt(ns[i]));
      rows.push_back(row);
    }
  {
    CsvTable csv(dir + "convergence.csv", columns);
    for (const auto& row : rows) csv.add_row(row);
  }
  write_hdf5_tables(dir + "convergence.h5", study_parameters(c), {{"convergence", columns, rows}});

  draw_figure(convergence_figure(c, result, dir + "convergence.png"));
  return result;
}

}  // namespace cpm

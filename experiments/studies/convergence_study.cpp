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
#include "io/output_directory.hpp"
#include "io/progress.hpp"
#include "solvers/grid_density.hpp"
#include "viz/gnuplot_plot.hpp"

namespace cpm {

namespace {

void read_convergence_section(TomlReader& root, ConvergenceConfig& c, int dim) {
  TomlReader t = root.table("convergence");
  if (t.has("ns")) {
    for (double n : t.numbers("ns")) {
      require(t, n >= 1 && n == std::floor(n), "ns", "must hold whole numbers of at least 1");
      c.ns.push_back(static_cast<int>(n));
    }
  } else {  // log-spaced range
    const auto lo = t.integer("n_min"), hi = t.integer("n_max"), count = t.integer("n_count", 4);
    require(t, lo >= 1, "n_min", "must be at least 1");
    require(t, hi >= lo, "n_max", "must be at least n_min");
    require(t, count >= 1, "n_count", "must be at least 1");
    for (std::int64_t i = 0; i < count; ++i) {
      const double f = count == 1 ? 0.0 : double(i) / double(count - 1);
      const int n = static_cast<int>(std::lround(lo * std::pow(double(hi) / lo, f)));
      if (c.ns.empty() || n != c.ns.back()) c.ns.push_back(n);
    }
  }
  require(t, !c.ns.empty(), "ns", "must not be empty");
  c.replicas = static_cast<int>(t.integer("replicas", c.replicas));
  require(t, c.replicas >= 2, "replicas", "must be at least 2");
  const std::vector<std::string> defaults =
      dim == 1 ? std::vector<std::string>{"w1", "w2", "l1", "energy"}
               : std::vector<std::string>{"sw2", "mmd", "l1", "energy"};
  c.metrics = t.strings("metrics", defaults);
  require(t, !c.metrics.empty(), "metrics", "must not be empty");
  for (const std::string& m : c.metrics) {
    const std::vector<std::string> known = {"w1", "w2", "sw2", "mmd", "l1", "energy"};
    require(t, std::find(known.begin(), known.end(), m) != known.end(), "metrics",
            "unknown metric '" + m + "' (expected w1, w2, sw2, mmd, l1, energy)");
    require(t, dim == 1 || (m != "w1" && m != "w2"), "metrics",
            "w1 and w2 are exact in one dimension only; use sw2");
  }
  c.bootstrap = static_cast<int>(t.integer("bootstrap", c.bootstrap));
  require(t, c.bootstrap >= 100, "bootstrap", "must be at least 100");
  c.confidence = t.number("confidence", c.confidence);
  require(t, c.confidence > 0.0 && c.confidence < 1.0, "confidence", "must lie in (0, 1)");
  t.finish();
}

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
    const std::string& name = m.config.metrics[i];
    if (name == "w1" || name == "w2") {
      if (!w) w = wasserstein_1d(x.col(0), m.grid, density);
      out[i] = name == "w1" ? w->w1 : w->w2;
    } else if (name == "sw2") {
      out[i] = sliced_wasserstein2(x, m.grid, density, m.directions);
    } else if (name == "mmd") {
      out[i] = mmd_gaussian(x, m.grid, density, m.bandwidth);
    } else if (name == "l1") {
      out[i] = histogram_l1(x, m.grid, density);
    } else {
      out[i] = energy_error;
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
  for (const auto& m : c.metrics) metrics += (metrics.empty() ? "" : " ") + m;
  p.set("convergence.metrics", metrics);
  p.set("convergence.bootstrap", static_cast<std::int64_t>(c.bootstrap));
  p.set("convergence.confidence", c.confidence);
  return p;
}

}  // namespace

ConvergenceConfig parse_convergence_config(const std::string& text, const std::string& source) {
  ConvergenceConfig c;
  c.model = parse_study_config(text, source, [&](TomlReader& root) {
    read_convergence_section(root, c, c.model.domain.dim());
  });
  if (!c.model.grid)
    throw InputError(source + ": grid: a convergence study needs a [grid] section for the PDE");
  return c;
}

ConvergenceConfig load_convergence_config(const std::string& path) {
  return parse_convergence_config(read_text_file(path), path);
}

ConvergenceResult run_convergence_study(const MpiEnvironment& mpi, const ConvergenceConfig& c,
                                        bool overwrite, bool progress) {
  if (mpi.is_root()) prepare_output_directory(c.model.output.directory, overwrite);

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
    Progress pde("cpm converge: grid solver", c.model.dynamics.t_end, progress && mpi.is_root());
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
        auto forces = make_force_field(model);
        auto integrator = make_integrator(model, *forces, replica);
        for (int k = 0; k < times; ++k) {
          integrator->advance_to(particles, result.times[k]);
          const EnergyTerms e = forces->energy(particles.positions);
          measure(context, particles.positions, densities[k],
                  std::abs(e.external + e.interaction - grid_energy[k]), row + k * metrics);
        }
        // The floor: N i.i.d. draws from ρ_T (streams of replica total + id, unused above).
        const Particles iid = sample_from_density(grid, densities.back(), model.n, model.seed,
                                                  static_cast<std::uint64_t>(total + id));
        const EnergyTerms e = forces->energy(iid.positions);
        measure(context, iid.positions, densities.back(),
                std::abs(e.external + e.interaction - grid_energy.back()), row + times * metrics);
      },
      progress ? "cpm converge: particles" : "");
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
    rates << c.metrics[m] << ',' << a.slope << ',' << a.slope_low << ',' << a.slope_high << ','
          << b.slope << ',' << b.slope_low << ',' << b.slope_high << '\n';
  }

  std::vector<std::string> columns = {"n", "time"};
  for (const auto& m : c.metrics)
    for (const char* s : {"_mean", "_std", "_se", "_floor_mean", "_floor_se"})
      columns.push_back(m + s);
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

  // Log–log plot at the final time: each metric, its i.i.d. floor, the fitted line, N^{-1/2}.
  std::vector<std::string> plot_columns = {"n"};
  for (const auto& m : c.metrics) {
    plot_columns.push_back(m);
    plot_columns.push_back(m + "_floor");
    if (nn >= 2) plot_columns.push_back(m + "_fit");
  }
  plot_columns.push_back("N^-1/2");
  {
    CsvTable final_table(dir + "convergence_final.csv", plot_columns);
    for (std::size_t i = 0; i < nn; ++i) {
      std::vector<double> row = {ns[i]};
      for (int m = 0; m < metrics; ++m) {
        row.push_back(result.summary[i][times - 1][m].mean);
        row.push_back(result.floor[i][m].mean);
        if (nn >= 2)
          row.push_back(std::exp(result.rates[m].intercept) *
                        std::pow(ns[i], result.rates[m].slope));
      }
      // The reference line through the first metric's first point.
      row.push_back(result.summary[0][times - 1][0].mean * std::sqrt(ns[0] / ns[i]));
      final_table.add_row(row);
    }
  }
  TimeSeriesPlot plot{
      dir + "convergence_final.csv",
      dir + "convergence.png",
      "n",
      std::vector<std::string>(plot_columns.begin() + 1, plot_columns.end()),
      true,
      "Particles against the PDE at the final time (floor: i.i.d. samples of the PDE)",
      "distance"};
  plot.log_x = true;
  plot_time_series(plot);
  return result;
}

}  // namespace cpm

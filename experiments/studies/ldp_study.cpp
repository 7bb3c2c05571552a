#include "experiments/studies/ldp_study.hpp"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/initial_law.hpp"
#include "experiments/model_builder.hpp"
#include "experiments/run/run_output.hpp"
#include "experiments/studies/replica_ensemble.hpp"
#include "io/csv_table.hpp"
#include "io/hdf5_table.hpp"
#include "io/number_format.hpp"
#include "io/output_directory.hpp"
#include "viz/plot.hpp"

namespace cpm {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Closed forms for T = |x̄| when V = a|x|²/2 in the whole space: the centre of mass is an
// Ornstein–Uhlenbeck process (pair forces cancel), stationary N(0, I/(βNa)), so
// P(T > δ) = Q(d/2, βNaδ²/2) and −(1/N) log P(T > δ) → βaδ²/2.
bool mean_theory_applies(const LdpConfig& c) {
  return c.statistic == LdpStatistic::mean && c.model.potential.kind == PotentialKind::quadratic &&
         c.model.domain.kind() == Domain::Kind::whole_space;
}

double replica_statistic(const LdpConfig& c, double beta, int n, std::uint64_t replica) {
  RunConfig model = c.model;
  model.n = n;
  model.dynamics.beta = beta;
  Particles particles = sample_particles(model.initial, n, model.seed, replica);
  model.domain.project_all(particles.positions);
  const ParticleSystem system = build_particle_system(particle_system_spec(model), replica);
  system.integrator->advance_to(particles, model.dynamics.t_end);
  if (c.statistic == LdpStatistic::mean) return particles.positions.colwise().mean().norm();
  if (c.statistic == LdpStatistic::energy)
    return system.forces->energy(particles.positions).total();
  const double a = model.potential.strength, kappa = model.interaction.kernel.kappa;
  const double sigma = 1.0 / std::sqrt(beta * (a + kappa * model.interaction.lambda));
  const Eigen::VectorXd x = particles.positions.col(0);
  return wasserstein1_to_normal(std::vector<double>(x.data(), x.data() + n), sigma);
}

// The model's parameters (as in run.h5, without particles.n) and the study's own.
ParameterSet study_parameters(const LdpConfig& c) {
  ParameterSet p = run_parameters(c.model);
  p.erase("particles.n");
  p.set("ldp.ns", std::vector<double>(c.ns.begin(), c.ns.end()));
  p.set("ldp.betas", c.betas);
  p.set("ldp.replicas", static_cast<std::int64_t>(c.replicas));
  p.set("ldp.statistic", name_of(c.statistic));
  p.set("ldp.deltas", c.deltas);
  p.set("ldp.confidence", c.confidence);
  return p;
}

// Wide tables (one column per (β, N)) and their plots: the tail probability against δ on a log
// scale, and the empirical rate against δ with the closed-form rate where it is known.
void write_plots(const LdpConfig& c, const std::vector<TailEstimate>& tails,
                 const std::string& dir) {
  std::vector<std::string> p_columns, rate_columns;
  for (double beta : c.betas)
    for (int n : c.ns) {
      std::string tag = "N";  // appended piecewise: GCC 12 misreads "N" + std::to_string(n)
      tag += std::to_string(n) + "_beta" + format_number(beta, 6);
      p_columns.push_back("P_" + tag);
      rate_columns.push_back("rate_" + tag);
    }
  const bool theory = mean_theory_applies(c);
  std::vector<std::string> theory_columns;
  if (theory)
    for (double beta : c.betas) theory_columns.push_back("theory_beta" + format_number(beta, 6));
  std::vector<std::string> header = {"delta"};
  header.insert(header.end(), p_columns.begin(), p_columns.end());
  header.insert(header.end(), rate_columns.begin(), rate_columns.end());
  header.insert(header.end(), theory_columns.begin(), theory_columns.end());
  {
    CsvTable wide(dir + "ldp_wide.csv", header);
    const std::size_t blocks = c.betas.size() * c.ns.size(), nd = c.deltas.size();
    for (std::size_t i = 0; i < nd; ++i) {
      std::vector<double> row = {c.deltas[i]};
      for (std::size_t b = 0; b < blocks; ++b) row.push_back(tails[b * nd + i].probability);
      for (std::size_t b = 0; b < blocks; ++b) row.push_back(tails[b * nd + i].rate);
      for (std::size_t k = 0; k < theory_columns.size(); ++k)
        row.push_back(tails[k * c.ns.size() * nd + i].theory_rate);
      wide.add_row(row);
    }
  }
  draw_figure({dir + "ldp_tail_probability.png",
               "Tail probability P(T > delta) of the " + name_of(c.statistic) + " statistic",
               {table_panel(dir + "ldp_wide.csv", "delta", p_columns, "P(T > delta)", true)}});
  Panel rates = table_panel(dir + "ldp_wide.csv", "delta", rate_columns, "rate", false);
  const Panel theory_lines =
      table_panel(dir + "ldp_wide.csv", "delta", theory_columns, "rate", false);
  for (Curve curve : theory_lines.curves) {
    curve.style = Curve::Style::dashed;
    rates.curves.push_back(curve);
  }
  draw_figure({dir + "ldp_rate.png", "Empirical rate -(1/N) log P(T > delta)", {rates}});
}

}  // namespace

void wilson_interval(int k, int n, double z, double& low, double& high) {
  const double p = static_cast<double>(k) / n, z2n = z * z / n;
  const double centre = (p + 0.5 * z2n) / (1.0 + z2n);
  const double half = z * std::sqrt(p * (1.0 - p) / n + 0.25 * z2n / n) / (1.0 + z2n);
  low = std::max(0.0, centre - half);
  high = std::min(1.0, centre + half);
}

double wasserstein1_to_normal(std::vector<double> x, double sigma) {
  // W1 = ∫ |F_N(t) − Φ(t/σ)| dt, summed exactly over the intervals between sorted samples with
  // the antiderivative G(t) = ∫_{−∞}^t Φ(u/σ) du = t Φ(t/σ) + σ φ(t/σ).
  std::sort(x.begin(), x.end());
  const boost::math::normal_distribution<double> normal;
  auto cdf = [&](double t) { return boost::math::cdf(normal, t / sigma); };
  auto g = [&](double t) { return t * cdf(t) + sigma * boost::math::pdf(normal, t / sigma); };
  // ∫_a^b |q − Φ| over [a, b] where Φ crosses q at most once (Φ is increasing).
  auto piece = [&](double a, double b, double q) {
    const double crossing = sigma * boost::math::quantile(normal, std::clamp(q, 1e-300, 1 - 1e-16));
    auto signed_integral = [&](double lo, double hi) { return q * (hi - lo) - (g(hi) - g(lo)); };
    if (crossing <= a || crossing >= b) return std::abs(signed_integral(a, b));
    return std::abs(signed_integral(a, crossing)) + std::abs(signed_integral(crossing, b));
  };
  const double n = static_cast<double>(x.size());
  // Tails: ∫_{−∞}^{x_0} Φ = G(x_0) and ∫_{x_{n−1}}^{∞} (1 − Φ) = σφ(x/σ) − x(1 − Φ(x/σ)).
  double w = g(x.front());
  const double last = x.back();
  w += sigma * boost::math::pdf(normal, last / sigma) - last * (1.0 - cdf(last));
  for (std::size_t i = 0; i + 1 < x.size(); ++i) w += piece(x[i], x[i + 1], (i + 1) / n);
  return w;
}

LdpResult run_ldp_study(const MpiEnvironment& mpi, const LdpConfig& c,
                        const CommandOptions& options) {
  const ReplicaRecovery recovery{"ldp", c.model.source, c.model.output.directory, options.restart};
  if (mpi.is_root())
    prepare_output_directory(c.model.output.directory,
                             options.overwrite || continues_in_place(recovery));
  const int blocks = static_cast<int>(c.betas.size() * c.ns.size());
  const int total = blocks * c.replicas;
  // Replica id = block · R + r: each replica has its own random streams.
  const Eigen::MatrixXd table = run_replicas(
      mpi, total, 1,
      [&](int id, double* row) {
        const int block = id / c.replicas;
        const double beta = c.betas[block / c.ns.size()];
        const int n = c.ns[block % c.ns.size()];
        row[0] = replica_statistic(c, beta, n, static_cast<std::uint64_t>(id));
      },
      options.progress ? "cpm ldp" : "", recovery);
  LdpResult result;
  if (!mpi.is_root()) return result;

  const boost::math::normal_distribution<double> normal;
  const double z = boost::math::quantile(normal, 0.5 + 0.5 * c.confidence);
  const std::string dir = c.model.output.directory + "/";
  NamedTable statistics{"statistics", {"beta", "n", "replica", "statistic"}, {}};
  for (int block = 0; block < blocks; ++block) {
    const double beta = c.betas[block / c.ns.size()];
    const int n = c.ns[block % c.ns.size()];
    std::vector<double> t(c.replicas);
    for (int r = 0; r < c.replicas; ++r) t[r] = table(block * c.replicas + r, 0);
    if (c.statistic == LdpStatistic::energy) {  // concentration about the ensemble average
      double mean = 0;
      for (double v : t) mean += v / c.replicas;
      for (double& v : t) v = std::abs(v - mean);
    }
    for (int r = 0; r < c.replicas; ++r)
      statistics.rows.push_back({beta, double(n), double(r), t[r]});
    for (double delta : c.deltas) {
      TailEstimate e{beta, n, delta, 0, c.replicas, 0, 0, 0, kNaN, kNaN, kNaN, kNaN, kNaN};
      e.exceedances =
          static_cast<int>(std::count_if(t.begin(), t.end(), [&](double v) { return v > delta; }));
      e.probability = static_cast<double>(e.exceedances) / c.replicas;
      wilson_interval(e.exceedances, c.replicas, z, e.probability_low, e.probability_high);
      auto rate = [n](double p) {
        return p > 0 ? -std::log(p) / n : std::numeric_limits<double>::infinity();
      };
      e.rate = rate(e.probability);
      e.rate_low = rate(e.probability_high);
      e.rate_high = rate(e.probability_low);
      if (mean_theory_applies(c)) {
        const double a = c.model.potential.strength;
        const double d = static_cast<double>(c.model.domain.dim());
        e.theory_rate = 0.5 * beta * a * delta * delta;
        e.exact_probability = boost::math::gamma_q(0.5 * d, 0.5 * beta * n * a * delta * delta);
      }
      result.tails.push_back(e);
    }
    result.statistics.push_back(std::move(t));
  }
  NamedTable tails{
      "tails",
      {"beta", "n", "delta", "exceedances", "replicas", "probability", "probability_low",
       "probability_high", "rate", "rate_low", "rate_high", "theory_rate", "exact_probability"},
      {}};
  for (const TailEstimate& e : result.tails)
    tails.rows.push_back({e.beta, double(e.n), e.delta, double(e.exceedances), double(e.replicas),
                          e.probability, e.probability_low, e.probability_high, e.rate, e.rate_low,
                          e.rate_high, e.theory_rate, e.exact_probability});
  for (const NamedTable* table : {&statistics, &tails}) {
    CsvTable csv(dir + "ldp_" + table->name + ".csv", table->columns);
    for (const auto& row : table->rows) csv.add_row(row);
  }
  write_hdf5_tables(dir + "ldp.h5", study_parameters(c), {statistics, tails});
  write_plots(c, result.tails, dir);
  return result;
}

}  // namespace cpm

#include "experiments/frequencies/feature_report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <stdexcept>

#include "experiments/studies/rate_fit.hpp"
#include "io/hdf5_table.hpp"
#include "io/number_format.hpp"
#include "viz/plot.hpp"

namespace cpm {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

MeanError mean_error(const std::vector<double>& v) {
  MeanError m;
  if (v.empty()) return m;
  for (double x : v) m.mean += x / static_cast<double>(v.size());
  if (v.size() < 2) return m;
  double square = 0.0;
  for (double x : v) square += (x - m.mean) * (x - m.mean);
  m.error = std::sqrt(square / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()));
  return m;
}

bool same_setting(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

// The records of one method (and coulomb exponent) at d and N.
std::vector<const ApproximationRecord*> cell(const std::vector<ApproximationRecord>& records,
                                             FeatureMethod m, double exponent, int d, long n) {
  std::vector<const ApproximationRecord*> out;
  for (const ApproximationRecord& r : records)
    if (r.method == m && same_setting(r.exponent, exponent) && r.dim == d && r.n == n)
      out.push_back(&r);
  return out;
}

// The coulomb exponent with the lowest mean selection error at d and N (NaN: none ran).
double chosen_exponent(const FeaturesStudyConfig& config,
                       const std::vector<ApproximationRecord>& records, int d, long n) {
  double best = kNaN, best_error = std::numeric_limits<double>::infinity();
  for (const InteractionKernel& k : coulomb_candidates(config, d)) {
    const double s = riesz_exponent(k);
    std::vector<double> e;
    for (const ApproximationRecord* r : cell(records, FeatureMethod::coulomb, s, d, n))
      e.push_back(r->selection_frobenius);
    if (!e.empty() && mean_error(e).mean < best_error) {
      best_error = mean_error(e).mean;
      best = s;
    }
  }
  return best;
}

void write_summary_csv(const std::string& path, const std::string& kernel,
                       const std::vector<FeatureSummaryRow>& rows) {
  std::ofstream out(path);
  out << "method,setting,kernel,dim,n,runs,frobenius_mean,frobenius_se,max_entry_mean,"
         "max_entry_se,spectral_mean,spectral_se,energy_distance_mean,energy_distance_se,"
         "seconds_mean,ratio_to_iid\n"
      << std::setprecision(10);
  for (const FeatureSummaryRow& r : rows)
    out << feature_method_name(r.method) << ',' << r.setting << ',' << kernel << ',' << r.dim << ','
        << r.n << ',' << r.runs << ',' << r.frobenius.mean << ',' << r.frobenius.error << ','
        << r.max_entry.mean << ',' << r.max_entry.error << ',' << r.spectral.mean << ','
        << r.spectral.error << ',' << r.energy_distance.mean << ',' << r.energy_distance.error
        << ',' << r.seconds.mean << ',' << r.ratio_to_iid << '\n';
  if (!out) throw std::runtime_error(path + ": cannot write the table (disk full?)");
}

struct MethodRate {
  FeatureMethod method;
  int dim;
  RateFit fit;
};

// The Frobenius rate of each summarised method and d (the coulomb rows at their chosen settings).
std::vector<MethodRate> fit_rates(const FeaturesStudyConfig& config,
                                  const std::vector<ApproximationRecord>& records,
                                  const std::vector<FeatureSummaryRow>& rows) {
  std::vector<MethodRate> rates;
  if (config.ns.size() < 2 || config.seeds < 2) return rates;
  for (int d : config.dims)
    for (FeatureMethod m : config.methods) {
      std::vector<double> ns;
      std::vector<std::vector<double>> samples;
      for (const FeatureSummaryRow& row : rows) {
        if (row.method != m || row.dim != d) continue;
        const double s =
            m == FeatureMethod::coulomb ? chosen_exponent(config, records, d, row.n) : kNaN;
        std::vector<double> e;
        for (const ApproximationRecord* r : cell(records, m, s, d, row.n))
          e.push_back(r->evaluation.frobenius);
        if (e.size() < 2) continue;
        ns.push_back(static_cast<double>(row.n));
        samples.push_back(e);
      }
      if (ns.size() >= 2)
        rates.push_back(
            {m, d, fit_rate(ns, samples, config.bootstrap, config.confidence, config.seed)});
    }
  return rates;
}

void write_rates_csv(const std::string& path, const std::string& kernel,
                     const std::vector<MethodRate>& rates) {
  std::ofstream out(path);
  out << "method,kernel,dim,slope,slope_low,slope_high\n" << std::setprecision(10);
  for (const MethodRate& r : rates)
    out << feature_method_name(r.method) << ',' << kernel << ',' << r.dim << ',' << r.fit.slope
        << ',' << r.fit.slope_low << ',' << r.fit.slope_high << '\n';
  if (!out) throw std::runtime_error(path + ": cannot write the table (disk full?)");
}

// Per d: the mean Frobenius error (its ratio to i.i.d.) at each N, one row per method.
void write_summary_md(const std::string& path, const FeaturesStudyConfig& config,
                      const std::vector<FeatureSummaryRow>& rows,
                      const std::vector<MethodRate>& rates) {
  std::ofstream md(path);
  md << (config.law == SpectralLaw::laplace
             ? "# Random features for the Laplace kernel exp(-sigma |x - y|), sigma = "
             : "# Random features for the Gaussian kernel exp(-sigma^2 |x - y|^2 / 2), sigma = ")
     << format_number(config.sigma) << "\n\nRelative Frobenius error of the Gram matrix on "
     << config.points << " " << config.point_source << " points (mean over " << config.seeds
     << " seeds; in parentheses the ratio to i.i.d. features). The coulomb setting is chosen on "
     << config.selection_points << " other points.\n";
  for (int d : config.dims) {
    md << "\n## d = " << d << "\n\n| method |";
    for (Eigen::Index n : config.ns) md << " N = " << n << " |";
    md << " slope [interval] |\n|---|";
    for (std::size_t i = 0; i <= config.ns.size(); ++i) md << "---|";
    md << '\n';
    for (FeatureMethod m : config.methods) {
      md << "| " << feature_method_name(m) << " |";
      for (const FeatureSummaryRow& r : rows)
        if (r.method == m && r.dim == d)
          md << ' ' << format_number(r.frobenius.mean, 3)
             << (std::isnan(r.ratio_to_iid) ? "" : " (" + format_number(r.ratio_to_iid, 2) + ")")
             << (r.setting.empty() ? "" : " " + r.setting) << " |";
      std::string slope = "—";
      for (const MethodRate& rate : rates)
        if (rate.method == m && rate.dim == d)
          slope = format_number(rate.fit.slope, 3) + " [" + format_number(rate.fit.slope_low, 3) +
                  ", " + format_number(rate.fit.slope_high, 3) + "]";
      md << ' ' << slope << " |\n";
    }
  }
  if (!md) throw std::runtime_error(path + ": cannot write the table (disk full?)");
}

void write_hdf5(const std::string& path, const FeaturesStudyConfig& config,
                const std::vector<ApproximationRecord>& records,
                const std::vector<FeatureSummaryRow>& rows, const std::vector<MethodRate>& rates) {
  ParameterSet p;
  std::string methods;
  for (FeatureMethod m : {FeatureMethod::iid, FeatureMethod::orthogonal, FeatureMethod::sobol,
                          FeatureMethod::halton, FeatureMethod::coulomb}) {
    if (!methods.empty()) methods += ',';
    methods += feature_method_name(m);
  }
  p.set("study.method_codes", methods);  // the `method` columns index this list
  p.set("study.sigma", config.sigma);
  p.set("study.kernel", spectral_law_name(config.law));
  p.set("study.seeds", static_cast<std::int64_t>(config.seeds));
  p.set("study.seed", config.seed);
  p.set("points.source", config.point_source);
  p.set("points.count", static_cast<std::int64_t>(config.points));
  p.set("points.selection_count", static_cast<std::int64_t>(config.selection_points));
  p.set("points.scale", config.point_scale);
  p.set("coulomb.lambda", config.repulsion.lambda);
  p.set("coulomb.beta", config.repulsion.beta);
  p.set("coulomb.tolerance", config.repulsion.tolerance);
  NamedTable approximation{
      "approximation",
      {"method", "s", "dim", "n", "seed", "frobenius", "max_entry", "spectral",
       "selection_frobenius", "energy_distance", "seconds", "iterations", "converged"},
      {}};
  for (const ApproximationRecord& r : records)
    approximation.rows.push_back(
        {static_cast<double>(r.method), r.exponent, static_cast<double>(r.dim),
         static_cast<double>(r.n), static_cast<double>(r.seed), r.evaluation.frobenius,
         r.evaluation.max_entry, r.evaluation.spectral, r.selection_frobenius, r.energy_distance,
         r.seconds, static_cast<double>(r.iterations), r.converged ? 1.0 : 0.0});
  NamedTable summary{"summary",
                     {"method", "dim", "n", "frobenius_mean", "frobenius_se", "max_entry_mean",
                      "spectral_mean", "energy_distance_mean", "seconds_mean", "ratio_to_iid"},
                     {}};
  for (const FeatureSummaryRow& r : rows)
    summary.rows.push_back({static_cast<double>(r.method), static_cast<double>(r.dim),
                            static_cast<double>(r.n), r.frobenius.mean, r.frobenius.error,
                            r.max_entry.mean, r.spectral.mean, r.energy_distance.mean,
                            r.seconds.mean, r.ratio_to_iid});
  NamedTable rate_table{"rates", {"method", "dim", "slope", "slope_low", "slope_high"}, {}};
  for (const MethodRate& r : rates)
    rate_table.rows.push_back({static_cast<double>(r.method), static_cast<double>(r.dim),
                               r.fit.slope, r.fit.slope_low, r.fit.slope_high});
  write_hdf5_tables(path, p, {approximation, summary, rate_table});
}

void draw_approximation_figure(const std::string& png, const FeaturesStudyConfig& config,
                               const std::vector<FeatureSummaryRow>& rows) {
  Figure figure{png,
                (config.law == SpectralLaw::laplace ? "Laplace" : "Gaussian") +
                    std::string(" kernel: Gram-matrix error against the number of features"),
                {},
                0};
  for (int d : config.dims) {
    Panel panel{"d = " + std::to_string(d), "N", "relative Frobenius error", true, true, {}, {}};
    std::vector<double> ns;
    for (Eigen::Index n : config.ns) ns.push_back(static_cast<double>(n));
    for (FeatureMethod m : config.methods) {
      Curve c{feature_method_name(m), ns, {}, {}, Curve::Style::lines_points, -1};
      for (const FeatureSummaryRow& r : rows)
        if (r.method == m && r.dim == d) {
          c.y.push_back(r.frobenius.mean);
          c.error.push_back(r.frobenius.error);
        }
      panel.curves.push_back(c);
    }
    Curve reference{"N^-1/2", ns, {}, {}, Curve::Style::dotted, 6};
    const double first = panel.curves.front().y.front();
    for (double n : ns) reference.y.push_back(first * std::sqrt(ns.front() / n));
    panel.curves.push_back(reference);
    figure.panels.push_back(panel);
  }
  draw_figure(figure);
}

}  // namespace

std::string setting_name(const ApproximationRecord& r) {
  if (r.method != FeatureMethod::coulomb) return "";
  return r.exponent == 0.0 ? "log" : "s=" + format_number(r.exponent);
}

std::vector<FeatureSummaryRow> summarise_features(const FeaturesStudyConfig& config,
                                                  const std::vector<ApproximationRecord>& records) {
  std::vector<FeatureSummaryRow> rows;
  for (int d : config.dims)
    for (FeatureMethod m : config.methods)
      for (Eigen::Index n : config.ns) {
        const double s =
            m == FeatureMethod::coulomb ? chosen_exponent(config, records, d, n) : kNaN;
        const auto runs = cell(records, m, s, d, n);
        if (runs.empty()) continue;
        FeatureSummaryRow row;
        row.method = m;
        row.setting = setting_name(*runs.front());
        row.dim = d;
        row.n = n;
        row.runs = static_cast<int>(runs.size());
        std::vector<double> f, e, sp, ed, t;
        for (const ApproximationRecord* r : runs) {
          f.push_back(r->evaluation.frobenius);
          e.push_back(r->evaluation.max_entry);
          sp.push_back(r->evaluation.spectral);
          ed.push_back(r->energy_distance);
          t.push_back(r->seconds);
        }
        row.frobenius = mean_error(f);
        row.max_entry = mean_error(e);
        row.spectral = mean_error(sp);
        row.energy_distance = mean_error(ed);
        row.seconds = mean_error(t);
        row.ratio_to_iid = kNaN;
        rows.push_back(row);
      }
  for (FeatureSummaryRow& row : rows)
    for (const FeatureSummaryRow& iid : rows)
      if (iid.method == FeatureMethod::iid && iid.dim == row.dim && iid.n == row.n)
        row.ratio_to_iid = row.frobenius.mean / iid.frobenius.mean;
  return rows;
}

void write_feature_report(const FeaturesStudyConfig& config,
                          const std::vector<ApproximationRecord>& records) {
  const std::string dir = config.output_directory + "/";
  const std::vector<FeatureSummaryRow> rows = summarise_features(config, records);
  const std::vector<MethodRate> rates = fit_rates(config, records, rows);
  write_summary_csv(dir + "summary.csv", spectral_law_name(config.law), rows);
  write_rates_csv(dir + "rates.csv", spectral_law_name(config.law), rates);
  write_summary_md(dir + "summary.md", config, rows, rates);
  write_hdf5(dir + "features.h5", config, records, rows, rates);
  draw_approximation_figure(dir + "approximation.png", config, rows);
}

}  // namespace cpm

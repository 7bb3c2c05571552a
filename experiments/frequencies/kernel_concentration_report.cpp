#include "experiments/frequencies/kernel_concentration_report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <stdexcept>

#include "io/hdf5_table.hpp"
#include "io/number_format.hpp"
#include "viz/plot.hpp"

namespace cpm {

namespace {

// A CSV table whose first column is the ensemble's label.
class LabelledCsv {
 public:
  LabelledCsv(const std::string& path, const std::string& header) : path_(path), out_(path) {
    out_ << header << '\n' << std::setprecision(10);
  }
  std::ostream& row(const std::string& label) { return out_ << '"' << label << '"'; }
  ~LabelledCsv() noexcept(false) {
    out_.flush();
    if (!out_) throw std::runtime_error(path_ + ": cannot write the table (disk full?)");
  }

 private:
  std::string path_;
  std::ofstream out_;
};

void write_tables(const KernelConcentrationConfig& c, const KernelConcentrationResult& r,
                  const std::string& dir) {
  {
    LabelledCsv csv(dir + "kernel_errors.csv", "ensemble,n,replica,frobenius");
    for (std::size_t e = 0; e < r.ensembles.size(); ++e)
      for (std::size_t i = 0; i < c.ns.size(); ++i)
        for (std::size_t k = 0; k < r.errors[e][i].size(); ++k)
          csv.row(r.ensembles[e].label())
              << ',' << c.ns[i] << ',' << k << ',' << r.errors[e][i][k] << '\n';
  }
  {
    LabelledCsv csv(dir + "kernel_tails.csv",
                    "ensemble,n,delta,exceedances,replicas,probability,probability_low,"
                    "probability_high,rate,rate_squared,bound");
    for (const KernelTail& t : r.tails)
      csv.row(r.ensembles[t.ensemble].label())
          << ',' << t.n << ',' << t.delta << ',' << t.exceedances << ',' << t.replicas << ','
          << t.probability << ',' << t.probability_low << ',' << t.probability_high << ',' << t.rate
          << ',' << t.rate_squared << ',' << t.bound << '\n';
  }
  {
    LabelledCsv csv(dir + "kernel_speeds.csv",
                    "ensemble,statistic,delta,points,speed,speed_low,speed_high");
    for (const KernelSpeed& s : r.speeds)
      csv.row(r.ensembles[s.ensemble].label())
          << ',' << s.statistic << ',' << s.delta << ',' << s.points << ',' << s.speed << ','
          << s.speed_low << ',' << s.speed_high << '\n';
  }
  {
    // Mean, standard deviation and mean square of f per ensemble and N, with the exact i.i.d.
    // mean square for comparison.
    LabelledCsv csv(dir + "kernel_fluctuations.csv",
                    "ensemble,n,mean,standard_deviation,mean_square,iid_mean_square");
    for (std::size_t e = 0; e < r.ensembles.size(); ++e)
      for (std::size_t i = 0; i < c.ns.size(); ++i) {
        const std::vector<double>& f = r.errors[e][i];
        double mean = 0.0, square = 0.0;
        for (double v : f) {
          mean += v / static_cast<double>(f.size());
          square += v * v / static_cast<double>(f.size());
        }
        csv.row(r.ensembles[e].label())
            << ',' << c.ns[i] << ',' << mean << ','
            << std::sqrt(std::max(0.0, square - mean * mean)) << ',' << square << ','
            << r.scaled_mean_square / static_cast<double>(c.ns[i]) << '\n';
      }
  }
  ParameterSet p;
  std::string labels;
  for (const FeatureEnsemble& e : r.ensembles) labels += (labels.empty() ? "" : ";") + e.label();
  p.set("ldp.ensembles", labels);
  p.set("ldp.ns", std::vector<double>(c.ns.begin(), c.ns.end()));
  p.set("ldp.replicas", static_cast<std::int64_t>(c.replicas));
  p.set("ldp.deltas", c.deltas);
  p.set("features.dim", static_cast<std::int64_t>(c.features.dims.front()));
  p.set("features.sigma", c.features.sigma);
  p.set("features.seed", c.features.seed);
  p.set("points.source", c.features.point_source);
  p.set("points.count", static_cast<std::int64_t>(c.features.points));
  p.set("points.scale", c.features.point_scale);
  p.set("coulomb.kernel", c.features.repulsion.kernel.describe());
  p.set("coulomb.lambda", c.features.repulsion.lambda);
  p.set("coulomb.steps", static_cast<std::int64_t>(c.features.repulsion.steps));
  p.set("coulomb.step", c.features.repulsion.step);
  p.set("iid.mcdiarmid_factor", r.mcdiarmid_factor);
  p.set("iid.scaled_mean_square", r.scaled_mean_square);
  NamedTable tails{"tails",
                   {"ensemble", "n", "delta", "exceedances", "replicas", "probability",
                    "probability_low", "probability_high", "rate", "rate_squared", "bound"},
                   {}};
  for (const KernelTail& t : r.tails)
    tails.rows.push_back({double(t.ensemble), double(t.n), t.delta, double(t.exceedances),
                          double(t.replicas), t.probability, t.probability_low, t.probability_high,
                          t.rate, t.rate_squared, t.bound});
  NamedTable speeds{
      "speeds", {"ensemble", "delta", "points", "speed", "speed_low", "speed_high"}, {}};
  for (const KernelSpeed& s : r.speeds)
    speeds.rows.push_back(
        {double(s.ensemble), s.delta, double(s.points), s.speed, s.speed_low, s.speed_high});
  write_hdf5_tables(dir + "kernel_concentration.h5", p, {tails, speeds});
}

// P(f > δ) against δ: a curve per N with its Wilson band as error bars; i.i.d.: McDiarmid's
// bound dashed in the same colour.
Panel tail_panel(const KernelConcentrationConfig& c, const KernelConcentrationResult& r, int e) {
  Panel panel{r.ensembles[e].label(), "delta", "P(f > delta)", false, true, {}, {}};
  for (std::size_t i = 0; i < c.ns.size(); ++i) {
    Curve measured{"N = " + std::to_string(c.ns[i]),
                   {},
                   {},
                   {},
                   Curve::Style::lines_points,
                   static_cast<int>(i)};
    Curve bound{"", {}, {}, {}, Curve::Style::dashed, static_cast<int>(i)};
    for (const KernelTail& t : r.tails) {
      if (t.ensemble != e || t.n != c.ns[i]) continue;
      measured.x.push_back(t.delta);
      measured.y.push_back(t.probability);
      measured.error.push_back(0.5 * (t.probability_high - t.probability_low));
      if (std::isfinite(t.bound)) {
        bound.x.push_back(t.delta);
        bound.y.push_back(t.bound);
      }
    }
    panel.curves.push_back(measured);
    if (!bound.x.empty()) {
      if (i == 0) bound.title = "McDiarmid bound";
      panel.curves.push_back(bound);
    }
  }
  return panel;
}

// −log P(f > δ) against N, log–log, for up to four δ measured at every N (evenly spread over
// them), with the slopes 1 (speed N) and 2 (speed N²) through the first point of the middle one.
Panel speed_panel(const KernelConcentrationConfig& c, const KernelConcentrationResult& r, int e) {
  Panel panel{r.ensembles[e].label(), "N", "-log P(f > delta)", true, true, {}, {}};
  std::vector<double> deltas;
  for (const KernelSpeed& s : r.speeds)
    if (s.ensemble == e && s.statistic == "tail" && s.points == static_cast<int>(c.ns.size()))
      deltas.push_back(s.delta);
  const std::size_t shown = std::min<std::size_t>(4, deltas.size());
  for (std::size_t k = 0; k < shown; ++k) {
    const double delta = deltas[shown == 1 ? 0 : k * (deltas.size() - 1) / (shown - 1)];
    Curve curve{"delta = " + format_number(delta, 4),
                {},
                {},
                {},
                Curve::Style::lines_points,
                static_cast<int>(k)};
    for (const KernelTail& t : r.tails)
      if (t.ensemble == e && t.delta == delta) {
        curve.x.push_back(static_cast<double>(t.n));
        curve.y.push_back(-std::log(t.probability));
      }
    panel.curves.push_back(curve);
  }
  if (panel.curves.empty()) return panel;
  const Curve& middle = panel.curves[panel.curves.size() / 2];
  const double x0 = middle.x.front(), y0 = middle.y.front();
  const double last = static_cast<double>(c.ns.back()), ratio = last / x0;
  const int colour = static_cast<int>(panel.curves.size());
  panel.curves.push_back(
      {"speed N", {x0, last}, {y0, y0 * ratio}, {}, Curve::Style::dotted, colour});
  panel.curves.push_back(
      {"speed N^2", {x0, last}, {y0, y0 * ratio * ratio}, {}, Curve::Style::dashed, colour + 1});
  return panel;
}

}  // namespace

void write_kernel_concentration_report(const KernelConcentrationConfig& c,
                                       const KernelConcentrationResult& r) {
  const std::string dir = c.features.output_directory + "/";
  write_tables(c, r, dir);
  Figure tails{dir + "kernel_tails.png", "Tails of the kernel's relative Frobenius error", {}, 0};
  Figure speeds{dir + "kernel_speed.png", "Speed of the kernel's concentration", {}, 0};
  for (int e = 0; e < static_cast<int>(r.ensembles.size()); ++e) {
    tails.panels.push_back(tail_panel(c, r, e));
    Panel speed = speed_panel(c, r, e);
    if (!speed.curves.empty()) speeds.panels.push_back(speed);  // no δ measured at every N
  }
  draw_figure(tails);
  if (!speeds.panels.empty()) draw_figure(speeds);
}

}  // namespace cpm

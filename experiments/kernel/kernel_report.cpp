#include "experiments/kernel/kernel_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <tuple>

#include "io/number_format.hpp"
#include "viz/plot.hpp"

namespace cpm {

MeanStd mean_std(const std::vector<double>& v) {
  MeanStd m;
  if (v.empty()) return m;
  for (double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0.0;
    for (double x : v) ss += (x - m.mean) * (x - m.mean);
    m.std = std::sqrt(ss / static_cast<double>(v.size() - 1));
  }
  return m;
}

std::vector<KernelSummaryRow> summarise_kernel_results(
    const std::vector<KernelRunResult>& results) {
  std::vector<KernelSummaryRow> rows;
  std::vector<std::tuple<double, std::string, Eigen::Index>> keys;
  for (const auto& r : results) {
    const auto key = std::make_tuple(r.label_noise, r.method, r.n);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  for (const auto& [noise, method, n] : keys) {
    std::vector<double> acc, ll, brier, ece, align, dmin;
    for (const auto& r : results)
      if (r.label_noise == noise && r.method == method && r.n == n) {
        acc.push_back(r.test.accuracy);
        ll.push_back(r.test.log_loss);
        brier.push_back(r.test.brier);
        ece.push_back(r.test.ece);
        align.push_back(r.alignment);
        dmin.push_back(r.distances.min);
      }
    rows.push_back({noise, method, n, static_cast<int>(acc.size()), mean_std(acc), mean_std(ll),
                    mean_std(brier), mean_std(ece), mean_std(align), mean_std(dmin)});
  }
  return rows;
}

MeanStd retained_accuracy(const std::vector<KernelRunResult>& results, double label_noise,
                          const std::string& method, Eigen::Index small, Eigen::Index large) {
  std::map<std::uint64_t, double> at_small, at_large;
  for (const auto& r : results)
    if (r.label_noise == label_noise && r.method == method) {
      if (r.n == small) at_small[r.seed] = r.test.accuracy;
      if (r.n == large) at_large[r.seed] = r.test.accuracy;
    }
  std::vector<double> ratios;
  for (const auto& [seed, acc] : at_small)
    if (at_large.count(seed) && at_large[seed] > 0.0) ratios.push_back(acc / at_large[seed]);
  return mean_std(ratios);
}

namespace {

std::string pm(const MeanStd& m, int digits = 3) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << m.mean << " ± " << m.std;
  return o.str();
}

// Test accuracy against N, one panel per label-noise level, mean ± std over seeds per method.
void write_plot(const KernelConfig& config, const std::vector<KernelSummaryRow>& rows) {
  Figure figure{config.output_directory + "/accuracy_vs_n.png", "test accuracy against N", {}, 0};
  for (double noise : config.data.label_noise) {
    Panel p;
    p.title = "label noise " + format_number(100 * noise, 3) + "%";
    p.x_label = "number of features N";
    p.y_label = "test accuracy";
    p.log_x = true;
    for (const auto& method : config.baselines.methods) {
      Curve c{method, {}, {}, {}, Curve::Style::lines_points, -1};
      for (const auto& r : rows)
        if (r.label_noise == noise && r.method == method) {
          c.x.push_back(static_cast<double>(r.n));
          c.y.push_back(r.accuracy.mean);
          c.error.push_back(r.accuracy.std);
        }
      p.curves.push_back(c);
    }
    figure.panels.push_back(p);
  }
  draw_figure(figure);
}

}  // namespace

void write_kernel_report(const KernelConfig& config, const std::vector<KernelRunResult>& results) {
  const std::string dir = config.output_directory + "/";
  const std::vector<KernelSummaryRow> rows = summarise_kernel_results(results);
  std::ofstream csv(dir + "summary.csv");
  csv << "label_noise,method,n,runs,accuracy_mean,accuracy_std,log_loss_mean,log_loss_std,"
         "brier_mean,brier_std,ece_mean,ece_std,alignment_mean,alignment_std,min_distance_mean,"
         "min_distance_std\n"
      << std::setprecision(10);
  for (const auto& r : rows)
    csv << r.label_noise << ',' << r.method << ',' << r.n << ',' << r.runs << ',' << r.accuracy.mean
        << ',' << r.accuracy.std << ',' << r.log_loss.mean << ',' << r.log_loss.std << ','
        << r.brier.mean << ',' << r.brier.std << ',' << r.ece.mean << ',' << r.ece.std << ','
        << r.alignment.mean << ',' << r.alignment.std << ',' << r.min_distance.mean << ','
        << r.min_distance.std << '\n';

  const auto& ns = config.features.n;
  const bool has_retained = std::find(ns.begin(), ns.end(), 64) != ns.end() &&
                            std::find(ns.begin(), ns.end(), 256) != ns.end();
  std::ofstream retained(dir + "retained.csv");
  retained << "label_noise,method,retained_64_of_256_mean,retained_64_of_256_std\n";

  std::ofstream md(dir + "summary.md");
  const Eigen::Index largest = *std::max_element(ns.begin(), ns.end());
  md << "Task `" << config.data.task << "`, feature map `" << feature_map_name(config.features.map)
     << "`, classifier " << config.classifier.kind << ", " << config.seeds
     << " seed(s); test accuracy mean ± std over seeds.\n";
  for (double noise : config.data.label_noise) {
    md << "\n**Label noise " << std::round(100 * noise) << "%**\n\n| method |";
    for (Eigen::Index n : ns) md << " N=" << n << " |";
    if (has_retained) md << " acc(64)/acc(256) |";
    md << "\n|---|";
    for (std::size_t i = 0; i < ns.size() + has_retained; ++i) md << "---|";
    md << '\n';
    for (const auto& method : config.baselines.methods) {
      md << "| " << method << " |";
      for (Eigen::Index n : ns)
        for (const auto& r : rows)
          if (r.label_noise == noise && r.method == method && r.n == n)
            md << ' ' << pm(r.accuracy) << " |";
      if (has_retained) {
        const MeanStd f = retained_accuracy(results, noise, method, 64, 256);
        md << ' ' << pm(f) << " |";
        retained << noise << ',' << method << ',' << f.mean << ',' << f.std << '\n';
      }
      md << '\n';
    }
    md << "\n| method (N=" << largest
       << ") | accuracy | log loss | Brier | ECE | alignment | min distance |\n"
       << "|---|---|---|---|---|---|---|\n";
    for (const auto& method : config.baselines.methods)
      for (const auto& r : rows)
        if (r.label_noise == noise && r.method == method && r.n == largest)
          md << "| " << method << " | " << pm(r.accuracy) << " | " << pm(r.log_loss) << " | "
             << pm(r.brier) << " | " << pm(r.ece) << " | " << pm(r.alignment, 4) << " | "
             << pm(r.min_distance) << " |\n";
  }
  write_plot(config, rows);
}

}  // namespace cpm

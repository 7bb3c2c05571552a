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
    std::vector<double> acc, ll, brier, ece, align, dmin, ecec, alignv, erank, norm, vacc, lam,
        ratio0, ratio1;
    std::vector<std::string> choices;
    for (const auto& r : results)
      if (r.label_noise == noise && r.method == method && r.n == n) {
        acc.push_back(r.test.accuracy);
        ll.push_back(r.test.log_loss);
        brier.push_back(r.test.brier);
        ece.push_back(r.test.ece);
        align.push_back(r.alignment_fit);
        dmin.push_back(r.distances.min);
        ecec.push_back(r.test_calibrated.ece);
        alignv.push_back(r.alignment_validation);
        erank.push_back(r.effective_rank);
        norm.push_back(r.norms.size() ? r.norms.mean() : 0.0);
        vacc.push_back(r.validation.accuracy);
        lam.push_back(r.learning.lambda);
        ratio0.push_back(r.learning.repulsion_ratio_initial);
        ratio1.push_back(r.learning.repulsion_ratio_final);
        std::ostringstream o;
        if (std::isnan(r.gamma))
          o << "l2 " << r.l2;
        else
          o << "γ " << r.gamma << ", β " << r.beta << ", " << r.steps << " steps, l2 " << r.l2;
        if (std::find(choices.begin(), choices.end(), o.str()) == choices.end())
          choices.push_back(o.str());
      }
    KernelSummaryRow row;
    row.label_noise = noise;
    row.method = method;
    row.n = n;
    row.runs = static_cast<int>(acc.size());
    row.accuracy = mean_std(acc);
    row.log_loss = mean_std(ll);
    row.brier = mean_std(brier);
    row.ece = mean_std(ece);
    row.alignment = mean_std(align);
    row.min_distance = mean_std(dmin);
    row.ece_calibrated = mean_std(ecec);
    row.alignment_validation = mean_std(alignv);
    row.effective_rank = mean_std(erank);
    row.mean_norm = mean_std(norm);
    row.validation_accuracy = mean_std(vacc);
    row.lambda = mean_std(lam);
    row.repulsion_ratio_initial = mean_std(ratio0);
    row.repulsion_ratio_final = mean_std(ratio1);
    for (const auto& ch : choices) row.choices += (row.choices.empty() ? "" : "; ") + ch;
    rows.push_back(row);
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

// The diagnostics at one label-noise level (the middle one of the sweep).
void write_diagnostics_plot(const KernelConfig& config, const std::vector<KernelSummaryRow>& rows,
                            const std::vector<KernelRunResult>& results) {
  const auto& levels = config.data.label_noise;
  const double noise = levels[levels.size() / 2];
  const auto& ns = config.features.n;
  const Eigen::Index largest = *std::max_element(ns.begin(), ns.end());
  const std::string level = "label noise " + format_number(100 * noise, 3) + "%";
  Figure figure{config.output_directory + "/diagnostics.png", "diagnostics, " + level, {}, 2};

  Panel hist;
  hist.title = "|ω| at N = " + std::to_string(largest) + " (all seeds)";
  hist.x_label = "|ω|";
  hist.y_label = "density";
  for (const auto& method : config.baselines.methods) {
    std::vector<double> norms;
    for (const auto& r : results)
      if (r.label_noise == noise && r.method == method && r.n == largest)
        for (Eigen::Index k = 0; k < r.norms.size(); ++k) norms.push_back(r.norms[k]);
    if (norms.empty()) continue;
    const double hi = *std::max_element(norms.begin(), norms.end()) * 1.0001 + 1e-12;
    constexpr int bins = 25;
    std::vector<double> count(bins, 0.0);
    for (double v : norms) count[std::min(bins - 1, static_cast<int>(v / hi * bins))] += 1.0;
    Curve c{method, {}, {}, {}, Curve::Style::line, -1};
    for (int b = 0; b < bins; ++b) {
      c.x.push_back(hi * (b + 0.5) / bins);
      c.y.push_back(count[b] / (static_cast<double>(norms.size()) * hi / bins));
    }
    hist.curves.push_back(c);
  }
  figure.panels.push_back(hist);

  Panel rank;
  rank.title = "effective rank of the centred features";
  rank.x_label = "N";
  rank.y_label = "effective rank";
  rank.log_x = rank.log_y = true;
  Panel align;
  align.title = "alignment A: fit rows (solid), held-out rows (dashed)";
  align.x_label = "N";
  align.y_label = "A(Ω)";
  align.log_x = true;
  int colour = 0;
  for (const auto& method : config.baselines.methods) {
    Curve cr{method, {}, {}, {}, Curve::Style::lines_points, colour};
    Curve cf{method, {}, {}, {}, Curve::Style::lines_points, colour};
    Curve cv{"", {}, {}, {}, Curve::Style::dashed, colour};
    for (const auto& r : rows)
      if (r.label_noise == noise && r.method == method) {
        cr.x.push_back(double(r.n));
        cr.y.push_back(r.effective_rank.mean);
        cf.x.push_back(double(r.n));
        cf.y.push_back(r.alignment.mean);
        cv.x.push_back(double(r.n));
        cv.y.push_back(r.alignment_validation.mean);
      }
    rank.curves.push_back(cr);
    align.curves.push_back(cf);
    align.curves.push_back(cv);
    ++colour;
  }
  figure.panels.push_back(rank);
  figure.panels.push_back(align);

  Panel curve;
  curve.title =
      "accuracy vs step, N = " + std::to_string(largest) + " (test solid, validation dashed)";
  curve.x_label = "learning step";
  curve.y_label = "accuracy";
  colour = 0;
  for (const auto& method : config.baselines.methods) {
    std::map<int, std::vector<double>> val, test;
    for (const auto& r : results)
      if (r.label_noise == noise && r.method == method && r.n == largest)
        for (const auto& p : r.curve) {
          val[p.step].push_back(p.validation_accuracy);
          test[p.step].push_back(p.test_accuracy);
        }
    if (val.size() >= 1 && method.rfind("learned", 0) == 0 && method != "learned-null") {
      Curve ct{method, {}, {}, {}, Curve::Style::lines_points, colour};
      Curve cv{"", {}, {}, {}, Curve::Style::dashed, colour};
      for (const auto& [step, v] : val) {
        ct.x.push_back(step);
        ct.y.push_back(mean_std(test[step]).mean);
        cv.x.push_back(step);
        cv.y.push_back(mean_std(v).mean);
      }
      curve.curves.push_back(ct);
      curve.curves.push_back(cv);
    }
    ++colour;
  }
  if (!curve.curves.empty()) figure.panels.push_back(curve);
  draw_figure(figure);
}

}  // namespace

void write_kernel_report(const KernelConfig& config, const std::vector<KernelRunResult>& results) {
  const std::string dir = config.output_directory + "/";
  const std::vector<KernelSummaryRow> rows = summarise_kernel_results(results);
  std::ofstream csv(dir + "summary.csv");
  csv << "label_noise,method,n,runs,accuracy_mean,accuracy_std,log_loss_mean,log_loss_std,"
         "brier_mean,brier_std,ece_mean,ece_std,alignment_mean,alignment_std,min_distance_mean,"
         "min_distance_std,ece_calibrated_mean,alignment_validation_mean,effective_rank_mean,"
         "mean_norm_mean,validation_accuracy_mean\n"
      << std::setprecision(10);
  for (const auto& r : rows)
    csv << r.label_noise << ',' << r.method << ',' << r.n << ',' << r.runs << ',' << r.accuracy.mean
        << ',' << r.accuracy.std << ',' << r.log_loss.mean << ',' << r.log_loss.std << ','
        << r.brier.mean << ',' << r.brier.std << ',' << r.ece.mean << ',' << r.ece.std << ','
        << r.alignment.mean << ',' << r.alignment.std << ',' << r.min_distance.mean << ','
        << r.min_distance.std << ',' << r.ece_calibrated.mean << ',' << r.alignment_validation.mean
        << ',' << r.effective_rank.mean << ',' << r.mean_norm.mean << ','
        << r.validation_accuracy.mean << '\n';

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
       << ") | accuracy | validation acc. | log loss | Brier | ECE | ECE after T | eff. rank | "
          "A fit rows | A held-out | mean abs(ω) | min distance | λ | repulsion/alignment drift "
          "(start → end) |\n"
       << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& method : config.baselines.methods)
      for (const auto& r : rows)
        if (r.label_noise == noise && r.method == method && r.n == largest)
          md << "| " << method << " | " << pm(r.accuracy) << " | " << pm(r.validation_accuracy)
             << " | " << pm(r.log_loss) << " | " << pm(r.brier) << " | " << pm(r.ece) << " | "
             << pm(r.ece_calibrated) << " | " << pm(r.effective_rank, 1) << " | "
             << pm(r.alignment, 4) << " | " << pm(r.alignment_validation, 4) << " | "
             << pm(r.mean_norm, 2) << " | " << pm(r.min_distance) << " | "
             << format_number(r.lambda.mean, 3) << " | "
             << format_number(r.repulsion_ratio_initial.mean, 3) << " → "
             << format_number(r.repulsion_ratio_final.mean, 3) << " |\n";
    md << "\nChosen on the validation rows (N=" << largest << "):\n\n";
    for (const auto& method : config.baselines.methods)
      for (const auto& r : rows)
        if (r.label_noise == noise && r.method == method && r.n == largest)
          md << "- " << method << ": " << r.choices << "\n";
  }
  write_plot(config, rows);
  write_diagnostics_plot(config, rows, results);
}

}  // namespace cpm

#include "experiments/attention/paired_report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <numeric>
#include <sstream>

#include "learning/paired_statistics.hpp"

namespace cpm {

namespace {

const EvaluationCondition* find_condition(const ArmResult& r, const std::string& name) {
  for (const auto& c : r.evaluation)
    if (c.name == name) return &c;
  return nullptr;
}

double metric(const ClassificationMetrics& m, int k) {
  switch (k) {
    case 0:
      return m.accuracy;
    case 1:
      return m.mcc;
    case 2:
      return m.ece;
    case 3:
      return m.log_loss;
    default:
      return m.brier;
  }
}

std::string fixed(double v, int digits = 4) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}
std::string signed_fixed(double v, int digits = 4) {
  std::ostringstream o;
  o << std::showpos << std::fixed << std::setprecision(digits) << v;
  return o.str();
}
std::string p_value(double p) {
  std::ostringstream o;
  if (p < 1e-4)
    o << std::scientific << std::setprecision(1) << p;
  else
    o << std::setprecision(2) << p;
  return o.str();
}
std::string mean_sd(const std::vector<double>& v) {
  if (v.empty()) return "–";
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  double ss = 0.0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return fixed(mean) + " ± " + fixed(v.size() > 1 ? std::sqrt(ss / (v.size() - 1)) : 0.0);
}
double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
std::string median_range(const std::vector<double>& v, int digits) {
  if (v.empty()) return "–";
  return fixed(median(v), digits) + " [" + fixed(*std::min_element(v.begin(), v.end()), digits) +
         ", " + fixed(*std::max_element(v.begin(), v.end()), digits) + "]";
}

class PairedReport {
 public:
  PairedReport(const std::vector<ArmRecord>& records,
               const std::map<std::string, std::vector<int>>& labels, int bootstrap_samples)
      : records_(records), labels_(labels), bootstrap_samples_(bootstrap_samples) {}

  // Per seed, the two arms' result (seeds where both exist).
  std::vector<std::pair<const ArmResult*, const ArmResult*>> pairs(const std::string& dataset,
                                                                   const std::string& a,
                                                                   const std::string& b) const {
    std::map<std::uint64_t, std::pair<const ArmResult*, const ArmResult*>> by_seed;
    for (const auto& r : records_) {
      if (r.dataset != dataset) continue;
      if (r.result.arm == a) by_seed[r.seed].first = &r.result;
      if (r.result.arm == b) by_seed[r.seed].second = &r.result;
    }
    std::vector<std::pair<const ArmResult*, const ArmResult*>> out;
    for (const auto& [seed, p] : by_seed)
      if (p.first && p.second) out.push_back(p);
    return out;
  }

  std::vector<double> values(const std::string& dataset, const std::string& arm,
                             const std::string& condition, int k) const {
    std::vector<double> v;
    for (const auto& r : records_)
      if (r.dataset == dataset && r.result.arm == arm)
        if (const auto* c = find_condition(r.result, condition)) v.push_back(metric(c->result, k));
    return v;
  }

  std::vector<bool> correct(const std::string& dataset, const EvaluationCondition& c) const {
    const std::vector<int>& y = labels_.at(dataset);
    std::vector<bool> ok(y.size());
    for (std::size_t i = 0; i < y.size(); ++i)
      ok[i] = c.predictions[static_cast<Eigen::Index>(i)] == y[i];
    return ok;
  }

  // "Δ (p)" of metric k in `condition`, a − b paired by seed.
  std::string paired_cell(const std::string& dataset, const std::string& a, const std::string& b,
                          const std::string& condition, int k) const {
    std::vector<double> d;
    for (const auto& [ra, rb] : pairs(dataset, a, b)) {
      const auto *ca = find_condition(*ra, condition), *cb = find_condition(*rb, condition);
      if (ca && cb) d.push_back(metric(ca->result, k) - metric(cb->result, k));
    }
    if (d.size() < 2) return "–";
    const PairedTTest t = paired_t_test(d);
    return signed_fixed(t.mean) + " (" + p_value(t.p) + ")";
  }

  // The accuracy row of arm a against arm b: means, Δ, bootstrap interval, t, McNemar.
  std::string accuracy_row(const std::string& dataset, const std::string& a,
                           const std::string& b) const {
    const auto ps = pairs(dataset, a, b);
    std::vector<double> d;
    std::vector<std::vector<double>> per_example;
    long long b_total = 0, c_total = 0;
    int significant = 0;
    for (const auto& [ra, rb] : ps) {
      const auto *ca = find_condition(*ra, "clean"), *cb = find_condition(*rb, "clean");
      d.push_back(ca->result.accuracy - cb->result.accuracy);
      const std::vector<bool> ka = correct(dataset, *ca), kb = correct(dataset, *cb);
      std::vector<double> diff(ka.size());
      for (std::size_t i = 0; i < ka.size(); ++i) diff[i] = double(ka[i]) - double(kb[i]);
      per_example.push_back(diff);
      const McNemarCounts counts = mcnemar_counts(ka, kb);
      b_total += counts.a_only;
      c_total += counts.b_only;
      significant += mcnemar_exact_p(counts.a_only, counts.b_only) < 0.05;
    }
    std::ostringstream row;
    row << "| " << a << " − " << b << " | " << ps.size() << " | "
        << mean_sd(values(dataset, a, "clean", 0)) << " | "
        << mean_sd(values(dataset, b, "clean", 0)) << " | ";
    if (d.size() < 2) {
      row << "– | – | – | – | – |";
      return row.str();
    }
    const PairedTTest t = paired_t_test(d);
    const Interval ci = two_level_bootstrap_interval(per_example, bootstrap_samples_, 0.95, 1);
    row << signed_fixed(t.mean) << " | [" << signed_fixed(ci.lower) << ", "
        << signed_fixed(ci.upper) << "] | " << std::setprecision(3) << t.t << " (" << p_value(t.p)
        << ") | " << b_total << " / " << c_total << " ("
        << p_value(mcnemar_exact_p(b_total, c_total)) << ") | " << significant << " of "
        << ps.size() << " |";
    return row.str();
  }

  void write(const std::string& path, const std::vector<std::string>& datasets,
             const std::vector<std::string>& maps, const std::vector<std::string>& controls,
             const TrainConfig& config) const {
    std::ofstream md(path);
    const int E = config.phase_a.warmup_epochs, E2 = config.training.epochs;
    md << "Paired protocol: " << E << " epoch(s) of vanilla-<map> → checkpoint → Phase A (kernel "
       << "arm only) → " << E2 << " epoch(s) for both arms from the checkpoint; controls trained "
       << E << " + " << E2 << " epochs the same way. Δ = first arm − second arm, paired by seed; "
       << "t: paired t over seeds (p two-sided); CI: 95 % two-level bootstrap (seeds and "
       << "examples, " << bootstrap_samples_ << " resamples); McNemar b / c: examples only the "
       << "first / only the second arm classifies correctly, summed over seeds (exact p of the "
       << "pooled counts), and the number of seeds whose own McNemar p < 0.05.\n\n";
    for (const auto& dataset : datasets) {
      md << "### " << dataset << "\n\n#### Accuracy, paired\n\n"
         << "| arms | seeds | accuracy (first) | accuracy (second) | Δ accuracy | 95 % CI | t (p) "
            "| McNemar b / c (p) | seeds with McNemar p < 0.05 |\n"
         << "|---|---|---|---|---|---|---|---|---|\n";
      for (const auto& m : maps) md << accuracy_row(dataset, "kernel-" + m, "vanilla-" + m) << "\n";
      for (const auto& m : maps)
        if (std::find(controls.begin(), controls.end(), "uniform") != controls.end())
          md << accuracy_row(dataset, "vanilla-" + m, "uniform") << "\n";
      if (std::find(controls.begin(), controls.end(), "softmax") != controls.end() &&
          std::find(controls.begin(), controls.end(), "uniform") != controls.end())
        md << accuracy_row(dataset, "softmax", "uniform") << "\n";
      md << "\n#### Other metrics, kernel − vanilla (paired t p)\n\n"
         << "| map | Δ MCC | Δ ECE | Δ log loss | Δ Brier | Δ acc. word drop 10 % | Δ acc. word "
            "drop 20 % | Δ acc. swaps |\n|---|---|---|---|---|---|---|---|\n";
      for (const auto& m : maps) {
        const std::string k = "kernel-" + m, v = "vanilla-" + m;
        md << "| " << m << " | " << paired_cell(dataset, k, v, "clean", 1) << " | "
           << paired_cell(dataset, k, v, "clean", 2) << " | "
           << paired_cell(dataset, k, v, "clean", 3) << " | "
           << paired_cell(dataset, k, v, "clean", 4) << " | "
           << paired_cell(dataset, k, v, "word_dropout_10", 0) << " | "
           << paired_cell(dataset, k, v, "word_dropout_20", 0) << " | "
           << paired_cell(dataset, k, v, "adjacent_swaps", 0) << " |\n";
      }
      md << "\n#### Every arm, mean ± sample std over seeds\n\n"
         << "| arm | accuracy | MCC | ECE | log loss | Brier | acc. word drop 10 % | acc. word "
            "drop 20 % |\n|---|---|---|---|---|---|---|---|\n";
      std::vector<std::string> arms = controls;
      for (const auto& m : maps) {
        arms.push_back("vanilla-" + m);
        arms.push_back("kernel-" + m);
      }
      for (const auto& arm : arms) {
        md << "| " << arm;
        for (int k = 0; k < 5; ++k) md << " | " << mean_sd(values(dataset, arm, "clean", k));
        md << " | " << mean_sd(values(dataset, arm, "word_dropout_10", 0)) << " | "
           << mean_sd(values(dataset, arm, "word_dropout_20", 0)) << " |\n";
      }
      md << "\n#### Phase A, per head (median [min, max] over seeds × layers × heads)\n\n"
         << "| map | alignment after / before | displacement / norm | linear-fit residual "
            "‖Ω₀A − Ω₁‖/‖Ω₁‖ | share of the change not absorbable ‖Ω₀A − Ω₁‖/‖Ω₁ − Ω₀‖ | steps "
            "(stopped by the tolerance) | λ | repulsion / alignment drift, start → end | Phase "
            "A time / Phase B time |\n|---|---|---|---|---|---|---|---|---|\n";
      for (const auto& m : maps) {
        std::vector<double> gain, moved, fit, share, steps, lambda, ratio0, ratio1, cost;
        int converged = 0, heads = 0;
        for (const auto& r : records_) {
          if (r.dataset != dataset || r.result.arm != "kernel-" + m) continue;
          if (r.result.train_seconds > 0.0)
            cost.push_back(r.result.phase_a_seconds / r.result.train_seconds);
          for (const auto& h : r.result.phase_a) {
            gain.push_back(h.before != 0.0 ? h.after / h.before : std::nan(""));
            moved.push_back(h.norm > 0.0 ? h.displacement / h.norm : 0.0);
            fit.push_back(h.fit_residual);
            share.push_back(h.unabsorbed);
            steps.push_back(h.steps);
            lambda.push_back(h.lambda);
            ratio0.push_back(h.repulsion_ratio_start);
            ratio1.push_back(h.repulsion_ratio_end);
            converged += h.converged;
            ++heads;
          }
        }
        std::ostringstream lam;
        lam << std::setprecision(3) << median(lambda);
        md << "| " << m << " | " << median_range(gain, 3) << " | " << median_range(moved, 3)
           << " | " << median_range(fit, 4) << " | " << median_range(share, 3) << " | "
           << fixed(median(steps), 0) << " (" << converged << " of " << heads << ") | " << lam.str()
           << " | " << fixed(median(ratio0), 3) << " → " << fixed(median(ratio1), 3) << " | "
           << median_range(cost, 3) << " |\n";
      }
      md << "\n";
    }
  }

  void write_runs(const std::string& path) const {
    std::ofstream out(path);
    out << "dataset,seed,arm,condition,accuracy,mcc,ece,log_loss,brier,pretrain_steps,steps,"
           "train_seconds,phase_a_seconds,start_digest\n"
        << std::setprecision(10);
    for (const auto& r : records_)
      for (const auto& c : r.result.evaluation) {
        out << r.dataset << ',' << r.seed << ',' << r.result.arm << ',' << c.name;
        for (int k = 0; k < 5; ++k) out << ',' << metric(c.result, k);
        out << ',' << r.result.pretrain_steps << ',' << r.result.steps << ','
            << r.result.train_seconds << ',' << r.result.phase_a_seconds << ',' << std::hex
            << r.result.start_digest << std::dec << '\n';
      }
  }

  void write_heads(const std::string& path) const {
    std::ofstream out(path);
    out << "dataset,seed,arm,layer,head,alignment_before,alignment_after,gamma_effective,lambda,"
           "repulsion_ratio_start,repulsion_ratio_end,steps,converged,particle_norm,"
           "particle_displacement,linear_fit_residual,unabsorbed_fraction,seconds\n"
        << std::setprecision(10);
    for (const auto& r : records_)
      for (const auto& h : r.result.phase_a)
        out << r.dataset << ',' << r.seed << ',' << r.result.arm << ',' << h.layer << ',' << h.head
            << ',' << h.before << ',' << h.after << ',' << h.gamma << ',' << h.lambda << ','
            << h.repulsion_ratio_start << ',' << h.repulsion_ratio_end << ',' << h.steps << ','
            << h.converged << ',' << h.norm << ',' << h.displacement << ',' << h.fit_residual << ','
            << h.unabsorbed << ',' << h.seconds << '\n';
  }

 private:
  const std::vector<ArmRecord>& records_;
  const std::map<std::string, std::vector<int>>& labels_;
  int bootstrap_samples_;
};

}  // namespace

void write_paired_report(const std::string& root, const std::vector<ArmRecord>& records,
                         const std::map<std::string, std::vector<int>>& labels,
                         const std::vector<std::string>& datasets,
                         const std::vector<std::string>& maps,
                         const std::vector<std::string>& controls, const TrainConfig& config) {
  const PairedReport report(records, labels, config.experiment.bootstrap_samples);
  report.write(root + "/paired.md", datasets, maps, controls, config);
  report.write_runs(root + "/paired_runs.csv");
  report.write_heads(root + "/phase_a_runs.csv");
}

}  // namespace cpm

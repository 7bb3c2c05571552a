#include "experiments/recall/recall_report.hpp"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "experiments/kernel/kernel_report.hpp"
#include "learning/paired_statistics.hpp"
#include "viz/plot.hpp"

namespace cpm {

RecallTable::RecallTable(const std::string& path) : path_(path), out_(path) {
  out_ << "task,variant,feature_dim,seed,size,pairs,accuracy,loss,validation_accuracy,best_step,"
          "seconds,phase_a_kl_before,phase_a_kl_after\n";
  out_.flush();
}

void RecallTable::add(const RecallRun& r) {
  out_ << r.task << ',' << r.variant << ',' << r.feature_dim << ',' << r.seed << ',' << r.size
       << ',' << r.pairs << ',' << std::setprecision(8) << r.accuracy << ',' << r.loss << ','
       << r.validation_accuracy << ',' << r.best_step << ',' << std::setprecision(4) << r.seconds
       << ',' << r.phase_a_kl_before << ',' << r.phase_a_kl_after << '\n';
  out_.flush();
}

namespace {

// An arm: the variant and, for maps with particles, its D_φ.
using Arm = std::pair<std::string, int>;

std::string arm_name(const Arm& a) {
  return a.second > 0 ? a.first + " (D=" + std::to_string(a.second) + ")" : a.first;
}

struct Cell {
  std::vector<double> accuracy, loss;
};

// (arm, size) → the seeds' results; arms in the order they first appear.
struct Grouped {
  std::vector<Arm> arms;
  std::vector<int> sizes;
  std::map<std::pair<Arm, int>, Cell> cells;
};

Grouped group(const std::vector<RecallRun>& runs) {
  Grouped g;
  std::set<int> sizes;
  for (const RecallRun& r : runs) {
    const Arm arm{r.variant, r.feature_dim};
    if (std::find(g.arms.begin(), g.arms.end(), arm) == g.arms.end()) g.arms.push_back(arm);
    sizes.insert(r.size);
    Cell& c = g.cells[{arm, r.size}];
    c.accuracy.push_back(r.accuracy);
    c.loss.push_back(r.loss);
  }
  g.sizes.assign(sizes.begin(), sizes.end());
  return g;
}

std::string format(const MeanStd& m) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f ± %.3f", m.mean, m.std);
  return text;
}

// The mean accuracy of a fixed-dimension arm (softmax, uniform) at a size, if it ran.
const Cell* find_cell(const Grouped& g, const std::string& variant, int size) {
  const auto it = g.cells.find({{variant, 0}, size});
  return it == g.cells.end() ? nullptr : &it->second;
}

// The arm an arm is paired with: vanilla-<map> of the same D_φ for redraw- and trainable-<map>,
// vanilla-softmaxfeat for hedgehog (softmax features of fixed particles); none otherwise.
// The arms an arm is paired with: its fixed-particle arm, and for the learned favor particles
// also the learned feature map (hedgehog) at the same D_φ.
std::vector<std::string> baselines_of(const std::string& variant) {
  if (variant == "hedgehog") return {"vanilla-softmaxfeat"};
  for (const std::string how : {"redraw-", "trainable-", "kernel-"})
    if (variant.rfind(how, 0) == 0) {
      std::vector<std::string> b = {"vanilla-" + variant.substr(how.size())};
      if (how != "redraw-") b.push_back("hedgehog");
      return b;
    }
  return {};
}

// Paired comparisons with the baseline arm: per size, the accuracy difference with the paired t
// test over seeds and McNemar's exact test on the test examples pooled over seeds.
void write_paired_section(std::ostream& out, const std::vector<RecallRun>& runs,
                          const std::string& size_name) {
  struct Pair {
    std::vector<double> differences;
    McNemarCounts counts;
  };
  std::map<std::tuple<std::string, int, int, std::string>, Pair> pairs;  // (arm, D_φ, size, base)
  for (const RecallRun& a : runs)
    for (const std::string& base : baselines_of(a.variant))
      for (const RecallRun& b : runs)
        if (b.variant == base && b.seed == a.seed && b.size == a.size &&
            (b.feature_dim == a.feature_dim || a.variant == "hedgehog") &&
            b.correct.size() == a.correct.size()) {
          Pair& p = pairs[{a.variant, a.feature_dim, a.size, base}];
          p.differences.push_back(a.accuracy - b.accuracy);
          const McNemarCounts c = mcnemar_counts(a.correct, b.correct);
          p.counts.a_only += c.a_only;
          p.counts.b_only += c.b_only;
        }
  if (pairs.empty()) return;
  out << "\n## Paired against the fixed-particle arm (same seed, same test set)\n\n| arm | "
      << size_name
      << " | accuracy difference (mean over seeds) | paired t p | McNemar b / c | McNemar p |\n"
         "|---|---|---|---|---|---|\n";
  for (const auto& [key, p] : pairs) {
    const auto& [variant, dim, size, base] = key;
    const MeanStd d = mean_std(p.differences);
    std::string t_p = "—";
    if (p.differences.size() >= 2) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3g", paired_t_test(p.differences).p);
      t_p = text;
    }
    char line[256];
    std::snprintf(line, sizeof line, "| %s vs %s | %d | %+.3f | %s | %lld / %lld | %.3g |\n",
                  arm_name({variant, dim}).c_str(), base.c_str(), size, d.mean, t_p.c_str(),
                  p.counts.a_only, p.counts.b_only,
                  mcnemar_exact_p(p.counts.a_only, p.counts.b_only));
    out << line;
  }
}

}  // namespace

void write_recall_summary(const std::string& path, const std::vector<RecallRun>& runs) {
  const Grouped g = group(runs);
  std::ofstream out(path);
  const std::string task = runs.empty() ? "" : runs.front().task;
  const bool mqar = task == "mqar";
  const std::string size_name = mqar ? "L" : "S";
  std::set<std::uint64_t> seeds;
  for (const auto& r : runs) seeds.insert(r.seed);
  out << "# Recall study: " << task << " (" << seeds.size() << " seed"
      << (seeds.size() == 1 ? "" : "s") << ", test split, best validated state)\n\n";

  out << "## Validity gate (softmax − uniform accuracy)\n\n| " << size_name
      << " | softmax | uniform | difference | separates maps |\n|---|---|---|---|---|\n";
  for (int size : g.sizes) {
    const Cell* s = find_cell(g, "softmax", size);
    const Cell* u = find_cell(g, "uniform", size);
    if (!s || !u) {
      out << "| " << size << " | " << (s ? format(mean_std(s->accuracy)) : "not run") << " | "
          << (u ? format(mean_std(u->accuracy)) : "not run") << " | — | unknown |\n";
      continue;
    }
    const double d = mean_std(s->accuracy).mean - mean_std(u->accuracy).mean;
    out << "| " << size << " | " << format(mean_std(s->accuracy)) << " | "
        << format(mean_std(u->accuracy)) << " | " << std::fixed << std::setprecision(3) << d
        << std::defaultfloat << " | " << (d >= kValidityGate ? "yes" : "NO: below 0.30") << " |\n";
  }

  for (const std::string what : {"accuracy", "loss"}) {
    out << "\n## Test " << what << " (mean ± std over seeds)\n\n| arm |";
    for (int size : g.sizes) out << ' ' << size_name << " = " << size << " |";
    out << "\n|---|";
    for (std::size_t i = 0; i < g.sizes.size(); ++i) out << "---|";
    out << '\n';
    for (const Arm& arm : g.arms) {
      out << "| " << arm_name(arm) << " |";
      for (int size : g.sizes) {
        const auto it = g.cells.find({arm, size});
        out << ' '
            << (it == g.cells.end()
                    ? std::string("—")
                    : format(mean_std(what == "accuracy" ? it->second.accuracy : it->second.loss)))
            << " |";
      }
      out << '\n';
    }
  }

  out << "\n## Capacity (largest " << size_name << " with mean accuracy ≥ " << kCapacityAccuracy
      << ")\n\n| arm | capacity |\n|---|---|\n";
  for (const Arm& arm : g.arms) {
    int capacity = 0;
    for (int size : g.sizes) {
      const auto it = g.cells.find({arm, size});
      if (it != g.cells.end() && mean_std(it->second.accuracy).mean >= kCapacityAccuracy)
        capacity = size;
    }
    out << "| " << arm_name(arm) << " | "
        << (capacity > 0 ? std::to_string(capacity) : "below the smallest size") << " |\n";
  }
  write_paired_section(out, runs, size_name);
}

void draw_recall_figure(const std::string& png, const std::vector<RecallRun>& runs) {
  const Grouped g = group(runs);
  const bool mqar = !runs.empty() && runs.front().task == "mqar";
  Panel panel{"", mqar ? "sequence length L" : "pairs S", "test accuracy", false, false, {}, {}};
  // One colour per variant; its first D_φ drawn solid, larger ones dashed.
  std::vector<std::string> variants;
  std::map<std::string, int> first_dim;
  for (const Arm& arm : g.arms) {
    if (std::find(variants.begin(), variants.end(), arm.first) == variants.end())
      variants.push_back(arm.first);
    if (!first_dim.count(arm.first)) first_dim[arm.first] = arm.second;
  }
  for (const Arm& arm : g.arms) {
    Curve c;
    c.title = arm_name(arm);
    c.colour =
        static_cast<int>(std::find(variants.begin(), variants.end(), arm.first) - variants.begin());
    if (arm.second != first_dim[arm.first]) c.style = Curve::Style::dashed_points;
    for (int size : g.sizes) {
      const auto it = g.cells.find({arm, size});
      if (it == g.cells.end()) continue;
      const MeanStd m = mean_std(it->second.accuracy);
      c.x.push_back(size);
      c.y.push_back(m.mean);
      c.error.push_back(m.std);
    }
    panel.curves.push_back(c);
  }
  draw_figure({png,
               std::string(mqar ? "MQAR" : "associative retrieval") +
                   ": accuracy against size (mean ± std over seeds)",
               {panel}});
}

}  // namespace cpm

#include "experiments/recall/recall_report.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "experiments/kernel/kernel_report.hpp"
#include "learning/paired_statistics.hpp"
#include "viz/plot.hpp"

namespace cpm {

namespace {

// An arm: the variant, its normalisation and its D_φ budget (the configured D_φ of particle and
// projected maps, the fixed D_φ of elu and dpfp, 0 for softmax and uniform).
struct Arm {
  std::string variant;
  RecallNormalisation normalisation = RecallNormalisation::none;
  int budget = 0;
  auto operator<=>(const Arm&) const = default;
};

int budget_of(const RecallRun& r) {
  return r.feature_budget > 0 ? r.feature_budget : r.feature_dim;
}

Arm arm_of(const RecallRun& r) {
  return {r.variant, r.normalisation, budget_of(r)};
}

// The variant with its normalisation when it has one: "kernel-favor [l2]".
std::string variant_label(const Arm& a) {
  return a.normalisation == RecallNormalisation::none
             ? a.variant
             : a.variant + " [" + name_of(a.normalisation) + "]";
}

std::string arm_name(const Arm& a) {
  return a.budget > 0 ? variant_label(a) + " (D=" + std::to_string(a.budget) + ")"
                      : variant_label(a);
}

std::string text(const char* format, double x) {
  char out[64];
  std::snprintf(out, sizeof out, format, x);
  return out;
}

std::string format(const MeanStd& m) {
  char out[64];
  std::snprintf(out, sizeof out, "%.3f ± %.3f", m.mean, m.std);
  return out;
}

// The selected runs of (arm, size), over seeds; arms and sizes in the order they first appear.
struct Grouped {
  std::vector<Arm> arms;
  std::vector<int> sizes;
  std::map<std::pair<Arm, int>, std::vector<const RecallRun*>> cells;
  const std::vector<const RecallRun*>* find(const Arm& arm, int size) const {
    const auto it = cells.find({arm, size});
    return it == cells.end() ? nullptr : &it->second;
  }
};

Grouped group(const std::vector<RecallRun>& runs) {
  Grouped g;
  std::set<int> sizes;
  for (const RecallRun& r : runs) {
    if (!r.selected) continue;
    const Arm arm = arm_of(r);
    if (std::find(g.arms.begin(), g.arms.end(), arm) == g.arms.end()) g.arms.push_back(arm);
    sizes.insert(r.size);
    g.cells[{arm, r.size}].push_back(&r);
  }
  g.sizes.assign(sizes.begin(), sizes.end());
  return g;
}

template <class F>
MeanStd over_seeds(const std::vector<const RecallRun*>& runs, F value) {
  std::vector<double> v;
  for (const RecallRun* r : runs) v.push_back(value(*r));
  return mean_std(v);
}

void write_header_row(std::ostream& out, const std::string& first, const std::vector<int>& sizes,
                      const std::string& size_name) {
  out << "| " << first << " |";
  for (int size : sizes) out << ' ' << size_name << " = " << size << " |";
  out << "\n|---|";
  for (std::size_t i = 0; i < sizes.size(); ++i) out << "---|";
  out << '\n';
}

// The grid of every arm with more than one point, and the point each arm chose per size.
void write_settings_section(std::ostream& out, const std::vector<RecallRun>& runs,
                            const std::vector<int>& sizes, const std::string& size_name) {
  // arm, τ, target, learning rate
  using Point = std::tuple<Arm, double, std::string, double>;
  std::map<std::pair<Point, int>, std::vector<double>> validation;
  std::map<std::pair<Point, int>, bool> selected;
  std::vector<Point> points;
  std::map<Arm, std::set<std::tuple<double, std::string, double>>> grid_of;
  std::set<double> rates;
  for (const RecallRun& r : runs) rates.insert(r.setting.learning_rate);
  auto describe = [&](const RecallArmSetting& s) {
    return "τ = " + text("%g", s.bandwidth) +
           (s.target == AlignmentTarget::none ? "" : ", " + name_of(s.target)) +
           (rates.size() > 1 ? ", rate " + text("%g", s.learning_rate) : "");
  };
  for (const RecallRun& r : runs) {
    const Point p{arm_of(r), r.setting.bandwidth, name_of(r.setting.target),
                  r.setting.learning_rate};
    if (std::find(points.begin(), points.end(), p) == points.end()) points.push_back(p);
    validation[{p, r.size}].push_back(r.validation_accuracy);
    selected[{p, r.size}] = r.selected;
    grid_of[arm_of(r)].insert(
        {r.setting.bandwidth, name_of(r.setting.target), r.setting.learning_rate});
  }
  bool any = false;
  for (const auto& [arm, grid] : grid_of) any = any || grid.size() > 1;
  if (!any) return;
  out << "\n## Validated settings (mean validation accuracy over seeds; ✓ the point chosen)\n\n"
         "Every scale-sensitive arm runs each bandwidth τ of the grid (φ reads τ·q and τ·k), "
         "every kernel arm each Phase A target (and every arm each learning rate of the grid); the "
         "point with the best validation accuracy is "
         "the one the other tables report. τ_eff is τ times what training did to the scale of "
         "φ's input (Phase A's change of the particles' RMS length, a learned temperature or "
         "metric, the learned scale of QK normalisation), mean over seeds.\n\n";
  write_header_row(out, "arm, grid point", sizes, size_name);
  for (const Point& p : points) {
    const auto& [arm, tau, target, rate] = p;
    if (grid_of[arm].size() < 2) continue;
    out << "| " << arm_name(arm) << ", "
        << describe({tau, enum_from_name<AlignmentTarget>(target), rate}) << " |";
    for (int size : sizes) {
      const auto it = validation.find({p, size});
      if (it == validation.end()) {
        out << " — |";
        continue;
      }
      out << ' ' << text("%.3f", mean_std(it->second).mean) << (selected[{p, size}] ? " ✓" : "")
          << " |";
    }
    out << '\n';
  }
  out << "\nThe chosen point and its effective bandwidth:\n\n";
  write_header_row(out, "arm", sizes, size_name);
  for (const auto& [arm, grid] : grid_of) {
    if (grid.size() < 2) continue;
    out << "| " << arm_name(arm) << " |";
    for (int size : sizes) {
      std::vector<double> effective;
      const RecallRun* chosen = nullptr;
      for (const RecallRun& r : runs)
        if (r.selected && arm_of(r) == arm && r.size == size) {
          chosen = &r;
          effective.push_back(r.effective_bandwidth);
        }
      if (!chosen) {
        out << " — |";
        continue;
      }
      out << ' ' << describe(chosen->setting)
          << ", τ_eff = " << text("%.3g", mean_std(effective).mean) << " |";
    }
    out << '\n';
  }
}

void write_capacity_diagnostic(std::ostream& out, const Grouped& g, const std::string& size_name) {
  bool any = false;
  for (const auto& [key, cell] : g.cells) any = any || cell.front()->capacity.sequences > 0;
  if (!any) return;
  out << "\n## Capacity diagnostic (test split, the trained network's own keys and queries, mean "
         "over seeds)\n\nmargin: (w_own − max other w) / max of the two, the query's own key "
         "against the strongest other; wins: share of queries whose own key has the largest "
         "weight; spread: log10(max/min ‖φ(k)‖) over a sequence; CV: std/mean of ‖φ(k)‖ over a "
         "sequence; T_eff: ‖x_q‖‖x_own‖, the inputs of φ (τq, τk; softmax: ‖q‖‖k‖/√d); "
         "coherence: mean and largest "
         "|cos(φ(k_i), φ(k_j))|; rank: the effective rank of [φ(k_1) … φ(k_S)] "
         "(softmax: of its exact kernel's Gram matrix).\n\n| arm | "
      << size_name
      << " | accuracy | margin | wins | spread | CV | T_eff | coherence mean | coherence max | "
         "rank |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Arm& arm : g.arms)
    for (int size : g.sizes) {
      const auto* cell = g.find(arm, size);
      if (!cell || cell->front()->capacity.sequences == 0) continue;
      auto mean = [&](auto value) { return over_seeds(*cell, value).mean; };
      out << "| " << arm_name(arm) << " | " << size << " | "
          << text("%.3f", mean([](const RecallRun& r) { return r.accuracy; })) << " | "
          << text("%+.3f", mean([](const RecallRun& r) { return r.capacity.margin; })) << " | "
          << text("%.3f", mean([](const RecallRun& r) { return r.capacity.own_key_wins; })) << " | "
          << text("%.2f", mean([](const RecallRun& r) { return r.capacity.norm_spread; })) << " | "
          << text("%.2f", mean([](const RecallRun& r) { return r.capacity.norm_cv; })) << " | "
          << text("%.3g", mean([](const RecallRun& r) { return r.capacity.effective_temperature; }))
          << " | "
          << text("%.3f", mean([](const RecallRun& r) { return r.capacity.coherence_mean; }))
          << " | "
          << text("%.3f", mean([](const RecallRun& r) { return r.capacity.coherence_max; }))
          << " | "
          << text("%.1f", mean([](const RecallRun& r) { return r.capacity.effective_rank; }))
          << " |\n";
    }
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// Particles learned from data: Phase A, back-propagation, a learned temperature or metric.
bool learned_particles(const std::string& variant) {
  for (const std::string how : {"kernel-", "trainable-", "temperature-", "metric-"})
    if (starts_with(variant, how)) return true;
  return false;
}

// The arms a run is paired with at the same D_φ budget: for redraw- and trainable-<map> and
// hedgehog their fixed-particle arm; for learned particles the fixed favor particles (with the
// same @softmax start), every fixed map (dpfp, elu, taylor, rebased, favor from another generator)
// and hedgehog.
bool is_baseline(const std::string& arm, const std::string& base) {
  if (arm == "hedgehog") return base == "vanilla-softmaxfeat";
  const std::string start =
      arm.size() > 8 && arm.substr(arm.size() - 8) == "@softmax" ? "@softmax" : "";
  if (starts_with(arm, "redraw-")) return base == "vanilla-" + arm.substr(7);
  if (!learned_particles(arm)) return false;
  if (base == "vanilla-favor" + start || base == "hedgehog") return true;
  return !learned_particles(base) && base.find('@') == std::string::npos &&
         (starts_with(base, "dpfp") || starts_with(base, "projected-dpfp") || base == "elu" ||
          base == "taylor" || base == "rebased" || starts_with(base, "vanilla-favor:"));
}

// Two arms' selected runs of one size paired by seed: the accuracy differences and McNemar's
// discordant counts pooled over the seeds.
struct Pair {
  std::vector<double> differences;
  McNemarCounts counts;
};
void add_pairs(const std::vector<const RecallRun*>& a, const std::vector<const RecallRun*>& b,
               Pair& p) {
  for (const RecallRun* ra : a)
    for (const RecallRun* rb : b)
      if (ra->seed == rb->seed && ra->correct.size() == rb->correct.size()) {
        p.differences.push_back(ra->accuracy - rb->accuracy);
        const McNemarCounts c = mcnemar_counts(ra->correct, rb->correct);
        p.counts.a_only += c.a_only;
        p.counts.b_only += c.b_only;
      }
}

// "| +0.012 | 0.03 | 40 / 12 | 1e-4 |": mean difference, paired t p, McNemar b / c and p.
std::string pair_columns(const Pair& p) {
  const std::string t_p =
      p.differences.size() >= 2 ? text("%.3g", paired_t_test(p.differences).p) : "—";
  char line[200];
  std::snprintf(line, sizeof line, "%+.3f | %s | %lld / %lld | %.3g |",
                mean_std(p.differences).mean, t_p.c_str(), p.counts.a_only, p.counts.b_only,
                mcnemar_exact_p(p.counts.a_only, p.counts.b_only));
  return line;
}

// Paired comparisons: per size, the accuracy difference with the paired t test over seeds and
// McNemar's exact test on the test examples pooled over seeds.
void write_paired_section(std::ostream& out, const Grouped& g, const std::string& size_name) {
  // (arm, baseline, size): the baseline's variant and normalisation, the arm's
  std::map<std::tuple<Arm, std::string, int>, Pair> pairs;
  for (const auto& [key_a, cell_a] : g.cells)
    for (const auto& [key_b, cell_b] : g.cells) {
      const Arm &a = key_a.first, &b = key_b.first;
      if (key_a.second != key_b.second || !is_baseline(a.variant, b.variant)) continue;
      if (a.normalisation != b.normalisation) continue;
      if (a.budget != b.budget && a.variant != "hedgehog") continue;
      add_pairs(cell_a, cell_b, pairs[{a, variant_label(b), key_a.second}]);
    }
  if (pairs.empty()) return;
  out << "\n## Paired comparisons (same seed, same test set; each arm at its validated point)\n\n"
         "| arm | "
      << size_name
      << " | accuracy difference (mean over seeds) | paired t p | McNemar b / c | McNemar p |\n"
         "|---|---|---|---|---|---|\n";
  for (const auto& [key, p] : pairs) {
    const auto& [arm, base, size] = key;
    out << "| " << arm_name(arm) << " vs " << base << " | " << size << " | " << pair_columns(p)
        << '\n';
  }
}

// Per normalisation, D_φ budget and size: the learned-particle arm with the best mean validation
// accuracy against the best other feature map (fixed particles, polynomial maps, Hedgehog), both
// chosen on validation, compared on test. Arms started from a softmax teacher are left out.
void write_best_against_best(std::ostream& out, const Grouped& g, const std::string& size_name) {
  auto validation = [](const std::vector<const RecallRun*>& cell) {
    return over_seeds(cell, [](const RecallRun& r) { return r.validation_accuracy; }).mean;
  };
  struct Best {
    const Arm* arm = nullptr;
    double validation = -1.0;
  };
  // (normalisation, budget, size) → (best learned, best other map)
  std::map<std::tuple<RecallNormalisation, int, int>, std::pair<Best, Best>> best;
  for (const auto& [key, cell] : g.cells) {
    const Arm& arm = key.first;
    if (arm.budget == 0 || arm.variant.find('@') != std::string::npos) continue;
    auto& [learned, other] = best[{arm.normalisation, arm.budget, key.second}];
    Best& slot = learned_particles(arm.variant) ? learned : other;
    const double v = validation(cell);
    if (v > slot.validation) slot = {&arm, v};
  }
  std::vector<std::string> rows;
  for (const auto& [key, pair] : best) {
    const auto& [normalisation, budget, size] = key;
    const auto& [learned, other] = pair;
    if (!learned.arm || !other.arm) continue;
    const auto &a = *g.find(*learned.arm, size), &b = *g.find(*other.arm, size);
    Pair p;
    add_pairs(a, b, p);
    auto accuracy = [](const std::vector<const RecallRun*>& cell) {
      return text("%.3f", over_seeds(cell, [](const RecallRun& r) { return r.accuracy; }).mean);
    };
    rows.push_back("| " + name_of(normalisation) + " | " + std::to_string(budget) + " | " +
                   std::to_string(size) + " | " + learned.arm->variant + " | " + accuracy(a) +
                   " | " + other.arm->variant + " | " + accuracy(b) + " | " + pair_columns(p) +
                   "\n");
  }
  if (rows.empty()) return;
  out << "\n## Best learned particles against the best other map (each chosen on validation; "
         "test)\n\n| normalisation | D_φ | "
      << size_name
      << " | learned | accuracy | other map | accuracy | difference | paired t p | McNemar b / c "
         "| McNemar p |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const std::string& row : rows) out << row;
}

}  // namespace

void write_recall_summary(const std::string& path, const std::vector<RecallRun>& runs) {
  const Grouped g = group(runs);
  std::ofstream out(path);
  const std::string task = runs.empty() ? "" : name_of(runs.front().task);
  const std::string size_name = !runs.empty() && runs.front().task == RecallTask::mqar ? "L" : "S";
  std::set<std::uint64_t> seeds;
  for (const auto& r : runs) seeds.insert(r.seed);
  out << "# Recall study: " << task << " (" << seeds.size() << " seed"
      << (seeds.size() == 1 ? "" : "s") << ", test split, best validated state)\n\n";

  out << "## Validity gate (softmax − uniform accuracy)\n\n| " << size_name
      << " | softmax | uniform | difference | separates maps |\n|---|---|---|---|---|\n";
  auto accuracy = [](const RecallRun& r) { return r.accuracy; };
  for (int size : g.sizes) {
    const auto* s = g.find({"softmax", RecallNormalisation::none, 0}, size);
    const auto* u = g.find({"uniform", RecallNormalisation::none, 0}, size);
    if (!s || !u) {
      out << "| " << size << " | " << (s ? format(over_seeds(*s, accuracy)) : "not run") << " | "
          << (u ? format(over_seeds(*u, accuracy)) : "not run") << " | — | unknown |\n";
      continue;
    }
    const double d = over_seeds(*s, accuracy).mean - over_seeds(*u, accuracy).mean;
    out << "| " << size << " | " << format(over_seeds(*s, accuracy)) << " | "
        << format(over_seeds(*u, accuracy)) << " | " << text("%.3f", d) << " | "
        << (d >= kValidityGate ? "yes" : "NO: below 0.30") << " |\n";
  }
  write_settings_section(out, runs, g.sizes, size_name);

  for (const std::string what : {"accuracy", "loss"}) {
    out << "\n## Test " << what << " (mean ± std over seeds)\n\n";
    write_header_row(out, "arm", g.sizes, size_name);
    for (const Arm& arm : g.arms) {
      out << "| " << arm_name(arm) << " |";
      for (int size : g.sizes) {
        const auto* cell = g.find(arm, size);
        out << ' '
            << (cell ? format(over_seeds(*cell,
                                         [&](const RecallRun& r) {
                                           return what == "accuracy" ? r.accuracy : r.loss;
                                         }))
                     : std::string("—"))
            << " |";
      }
      out << '\n';
    }
  }

  out << "\n## Capacity (largest " << size_name << " with mean accuracy ≥ " << kCapacityAccuracy
      << ")\n\n| arm | D_φ | capacity |\n|---|---|---|\n";
  for (const Arm& arm : g.arms) {
    int capacity = 0, dim = 0;
    for (int size : g.sizes) {
      const auto* cell = g.find(arm, size);
      if (!cell) continue;
      dim = cell->front()->feature_dim;
      if (over_seeds(*cell, accuracy).mean >= kCapacityAccuracy) capacity = size;
    }
    out << "| " << arm_name(arm) << " | " << (dim > 0 ? std::to_string(dim) : "—") << " | "
        << (capacity > 0 ? std::to_string(capacity) : "below the smallest size") << " |\n";
  }
  write_capacity_diagnostic(out, g, size_name);
  write_paired_section(out, g, size_name);
  write_best_against_best(out, g, size_name);
}

void draw_recall_figure(const std::string& png, const std::vector<RecallRun>& runs) {
  const Grouped g = group(runs);
  const bool mqar = !runs.empty() && runs.front().task == RecallTask::mqar;
  Panel panel{"", mqar ? "sequence length L" : "pairs S", "test accuracy", false, false, {}, {}};
  // One colour per variant and normalisation; its first D_φ drawn solid, larger ones dashed.
  std::vector<std::string> variants;
  std::map<std::string, int> first_dim;
  for (const Arm& arm : g.arms) {
    const std::string label = variant_label(arm);
    if (std::find(variants.begin(), variants.end(), label) == variants.end())
      variants.push_back(label);
    if (!first_dim.count(label)) first_dim[label] = arm.budget;
  }
  for (const Arm& arm : g.arms) {
    const std::string label = variant_label(arm);
    Curve c;
    c.title = arm_name(arm);
    c.colour =
        static_cast<int>(std::find(variants.begin(), variants.end(), label) - variants.begin());
    if (arm.budget != first_dim[label]) c.style = Curve::Style::dashed_points;
    for (int size : g.sizes) {
      const auto* cell = g.find(arm, size);
      if (!cell) continue;
      const MeanStd m = over_seeds(*cell, [](const RecallRun& r) { return r.accuracy; });
      c.x.push_back(size);
      c.y.push_back(m.mean);
      c.error.push_back(m.std);
    }
    panel.curves.push_back(c);
  }
  draw_figure({png,
               std::string(mqar ? "MQAR" : "associative retrieval") +
                   ": accuracy against size (mean ± std over seeds, validated settings)",
               {panel}});
}

}  // namespace cpm

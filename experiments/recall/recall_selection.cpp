#include "experiments/recall/recall_selection.hpp"

#include <map>
#include <set>
#include <tuple>

namespace cpm {

void select_recall_settings(std::vector<RecallRun>& runs) {
  // variant, normalisation, budget, size
  using Cell = std::tuple<std::string, RecallNormalisation, int, int>;
  using Point = std::tuple<double, std::string, double>;  // τ, target, learning rate
  struct Sums {
    double accuracy = 0.0, loss = 0.0;
    std::set<std::uint64_t> seeds;
  };
  std::map<Cell, std::map<Point, Sums>> cells;
  std::map<Cell, std::set<std::uint64_t>> seeds_of;
  for (const RecallRun& r : runs) {
    const Cell cell{r.variant, r.normalisation, r.feature_budget, r.size};
    Sums& s =
        cells[cell][{r.setting.bandwidth, name_of(r.setting.target), r.setting.learning_rate}];
    s.accuracy += r.validation_accuracy;
    s.loss += r.validation_loss;
    s.seeds.insert(r.seed);
    seeds_of[cell].insert(r.seed);
  }
  std::map<Cell, Point> chosen;
  for (const auto& [cell, points] : cells) {
    bool found = false;
    double best_accuracy = 0.0, best_loss = 0.0;
    for (const auto& [point, s] : points) {  // in (τ, target) order: ties keep the first
      if (s.seeds != seeds_of[cell]) continue;
      const double n = static_cast<double>(s.seeds.size());
      const double accuracy = s.accuracy / n, loss = s.loss / n;
      if (!found || accuracy > best_accuracy || (accuracy == best_accuracy && loss < best_loss)) {
        found = true;
        best_accuracy = accuracy;
        best_loss = loss;
        chosen[cell] = point;
      }
    }
  }
  for (RecallRun& r : runs) {
    const auto it = chosen.find({r.variant, r.normalisation, r.feature_budget, r.size});
    r.selected = it != chosen.end() &&
                 it->second ==
                     Point{r.setting.bandwidth, name_of(r.setting.target), r.setting.learning_rate};
  }
}

}  // namespace cpm

#include "learning/synthetic_tasks.hpp"

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "core/random_stream.hpp"

namespace cpm {

namespace {

// The replicas of RandomPurpose::synthetic_data, one per use of the seed.
enum Family : std::uint64_t { train_rows = 0, test_rows = 1, centres = 2, noise = 3 };

LabelledData sample(const SyntheticTask& t, Eigen::Index n, std::uint64_t seed, Family family,
                    const Eigen::MatrixXd& cluster_centres) {
  LabelledData data;
  data.x.resize(n, t.dim);
  data.y.resize(n);
  data.classes = t.kind == SyntheticTask::Kind::mixture ? t.classes : 2;
  const int k = t.kind == SyntheticTask::Kind::subspace ? t.relevant : t.dim;
  const double radius = t.radius > 0.0
                            ? t.radius
                            : std::sqrt(k * std::pow(1.0 - 2.0 / (9.0 * k), 3.0));  // median χ_k
#pragma omp parallel for schedule(static) if (n * t.dim > 16384)
  for (Eigen::Index i = 0; i < n; ++i) {
    RandomStream s(seed, RandomPurpose::synthetic_data, family, static_cast<std::uint64_t>(i));
    switch (t.kind) {
      case SyntheticTask::Kind::variance: {
        const int label = static_cast<int>(i % 2);  // balanced classes
        const double sd = std::sqrt(label == 1 ? 1.0 + t.tau : 1.0 - t.tau);
        for (int a = 0; a < t.dim; ++a) data.x(i, a) = sd * s.normal();
        data.y[i] = label;
        break;
      }
      case SyntheticTask::Kind::radial:
      case SyntheticTask::Kind::subspace:
        for (int a = 0; a < t.dim; ++a) data.x(i, a) = s.normal();
        data.y[i] = data.x.row(i).head(k).norm() > radius ? 1 : 0;
        break;
      case SyntheticTask::Kind::mixture: {
        const auto j = static_cast<Eigen::Index>(s.uniform() * t.components) % t.components;
        for (int a = 0; a < t.dim; ++a) data.x(i, a) = cluster_centres(j, a) + t.width * s.normal();
        data.y[i] = static_cast<int>(j % t.classes);
        break;
      }
    }
  }
  return data;
}

}  // namespace

SyntheticTask::Kind synthetic_task_kind(const std::string& name) {
  if (name == "variance") return SyntheticTask::Kind::variance;
  if (name == "radial") return SyntheticTask::Kind::radial;
  if (name == "subspace") return SyntheticTask::Kind::subspace;
  if (name == "mixture") return SyntheticTask::Kind::mixture;
  throw std::invalid_argument("unknown synthetic task '" + name +
                              "' (expected one of: variance, radial, subspace, mixture)");
}

DataSplit make_synthetic_task(const SyntheticTask& t, std::uint64_t seed) {
  if (t.dim < 1 || t.train_size < 2 || t.test_size < 1)
    throw std::invalid_argument("synthetic task: needs dim >= 1, train_size >= 2, test_size >= 1");
  if (t.kind == SyntheticTask::Kind::variance && !(t.tau > 0.0 && t.tau < 1.0))
    throw std::invalid_argument("variance task: tau must lie in (0, 1)");
  if (t.kind == SyntheticTask::Kind::subspace && !(t.relevant >= 1 && t.relevant <= t.dim))
    throw std::invalid_argument("subspace task: relevant must lie in [1, dim]");
  if (t.kind == SyntheticTask::Kind::mixture && (t.classes < 2 || t.components < t.classes))
    throw std::invalid_argument("mixture task: needs classes >= 2 and components >= classes");
  Eigen::MatrixXd cluster_centres;
  if (t.kind == SyntheticTask::Kind::mixture) {
    cluster_centres.resize(t.components, t.dim);
    for (int j = 0; j < t.components; ++j) {
      RandomStream s(seed, RandomPurpose::synthetic_data, centres, static_cast<std::uint64_t>(j));
      for (int a = 0; a < t.dim; ++a) cluster_centres(j, a) = t.separation * s.normal();
    }
  }
  DataSplit split{sample(t, t.train_size, seed, train_rows, cluster_centres),
                  sample(t, t.test_size, seed, test_rows, cluster_centres)};
  apply_label_noise(split.train.y, split.train.classes, t.label_noise, seed);
  return split;
}

Eigen::Index apply_label_noise(Eigen::VectorXi& labels, int classes, double fraction,
                               std::uint64_t seed) {
  if (!(fraction >= 0.0 && fraction <= 1.0))
    throw std::invalid_argument("label noise must lie in [0, 1]");
  const Eigen::Index n = labels.size();
  const auto flips = static_cast<Eigen::Index>(std::llround(fraction * static_cast<double>(n)));
  std::vector<Eigen::Index> rows(static_cast<std::size_t>(n));
  std::iota(rows.begin(), rows.end(), Eigen::Index{0});
  RandomStream s(seed, RandomPurpose::synthetic_data, noise, 0);
  for (Eigen::Index r = 0; r < flips; ++r) {  // the flipped rows: a random subset, drawn in turn
    draw_into_position(rows, static_cast<std::size_t>(r), s);
    const int shift = 1 + std::min(static_cast<int>(s.uniform() * (classes - 1)), classes - 2);
    labels[rows[r]] = (labels[rows[r]] + shift) % classes;
  }
  return flips;
}

}  // namespace cpm

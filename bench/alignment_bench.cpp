// The alignment potential's batched fast path (two matrix products around elementwise maps)
// against the pointwise reference (the small value types of physics/random_feature_maps.hpp, one
// data point and one particle at a time): one evaluation of V_align and its gradient.
//
//   cmake --build build --target alignment_bench && build/bin/alignment_bench
#include <chrono>
#include <cstdio>
#include <memory>

#include "bench/instruction_set.hpp"
#include "core/feature_initialisation.hpp"
#include "learning/synthetic_tasks.hpp"
#include "physics/alignment.hpp"

namespace {

template <class F>
double best_seconds(F&& f, int repeats = 5) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// ∇_{ω_k} of −γ m_k², m_k = (1/n) Σ_i y_i φ(x_i; ω_k), one (i, k) pair at a time.
template <class Feature>
void pointwise_gradient(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                        const Eigen::MatrixXd& w, const std::vector<Feature>& features,
                        Eigen::MatrixXd& gradient) {
  const double n = static_cast<double>(x.rows());
  for (Eigen::Index k = 0; k < w.rows(); ++k) {
    const Eigen::VectorXd wk = w.row(k).transpose();
    double m = 0.0;
    Eigen::VectorXd dm = Eigen::VectorXd::Zero(w.cols());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      const Eigen::VectorXd xi = x.row(i).transpose();
      m += y[i] * features[k].value(xi, wk) / n;
      dm += (y[i] / n) * features[k].gradient(xi, wk);
    }
    gradient.row(k) = (-2.0 * m) * dm.transpose();
  }
}

}  // namespace

int main() {
  cpm::print_instruction_set();
  using namespace cpm;
  SyntheticTask task;
  task.dim = 8;
  task.train_size = 2000;
  const DataSplit data = make_synthetic_task(task, 1);
  auto x = std::make_shared<const Eigen::MatrixXd>(data.train.x);
  const Eigen::MatrixXd targets = alignment_targets(data.train.y, 2);
  std::printf("n = %ld, d = %d, rff, one evaluation of V_align and its gradient (best of 5)\n",
              static_cast<long>(x->rows()), task.dim);
  std::printf("%6s %14s %14s %8s %12s\n", "N", "batched ms", "pointwise ms", "ratio", "max |diff|");
  for (Eigen::Index n : {16, 64, 256, 512}) {
    const Eigen::MatrixXd w = gaussian_features(n, task.dim, 1.0, 2);
    const FeatureMap map = FeatureMap::with_random_phases(FeatureMapKind::rff, n, 3);
    AlignmentPotential potential(x, targets, map, {1.0, false, 0, 1});
    Eigen::VectorXd value;
    Eigen::MatrixXd fast(n, task.dim), slow(n, task.dim);
    std::vector<RffFeature> features;
    for (Eigen::Index k = 0; k < n; ++k) features.push_back(RffFeature{map.phases()[k]});
    const double t_fast = best_seconds([&] { potential.evaluate(w, value, &fast); });
    const double t_slow =
        best_seconds([&] { pointwise_gradient(*x, targets.col(0), w, features, slow); }, 2);
    std::printf("%6ld %14.3f %14.3f %8.1f %12.2e\n", static_cast<long>(n), 1e3 * t_fast,
                1e3 * t_slow, t_slow / t_fast, (fast - slow).cwiseAbs().maxCoeff());
  }
}

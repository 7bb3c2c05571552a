#include <vector>

#include "solvers/interaction_sum.hpp"

namespace cpm {
namespace {

template <class Evaluator>
class ReferencePairSum final : public InteractionSum {
 public:
  explicit ReferencePairSum(Evaluator w) : w_(w) {}

  void compute(const Eigen::MatrixXd& x, Eigen::MatrixXd& gradient, double* pair_energy) override {
    const Eigen::Index n = x.rows(), d = x.cols();
    if (row_energy_.size() != static_cast<std::size_t>(n)) row_energy_.assign(n, 0.0);
#pragma omp parallel
    {
      std::vector<double> z(d), g(d);
#pragma omp for schedule(static)
      for (Eigen::Index k = 0; k < n; ++k) {
        std::fill(g.begin(), g.end(), 0.0);
        double e = 0.0;
        for (Eigen::Index l = 0; l < n; ++l) {
          if (l == k) continue;
          double r2 = 0.0;
          for (Eigen::Index a = 0; a < d; ++a) {
            z[a] = x(k, a) - x(l, a);
            r2 += z[a] * z[a];
          }
          const double factor = w_.gradient_factor(r2);
          for (Eigen::Index a = 0; a < d; ++a) g[a] += factor * z[a];
          if (pair_energy) e += w_.value_r2(r2);
        }
        for (Eigen::Index a = 0; a < d; ++a) gradient(k, a) = g[a];
        row_energy_[k] = e;
      }
    }
    if (pair_energy) {
      double total = 0.0;
      for (double e : row_energy_) total += e;
      *pair_energy = total;
    }
  }

  std::string name() const override {
    return "reference";
  }

 private:
  Evaluator w_;
  std::vector<double> row_energy_;
};

}  // namespace

std::unique_ptr<InteractionSum> make_reference_pair_sum(const InteractionKernel& kernel) {
  return visit(kernel, [](auto w) -> std::unique_ptr<InteractionSum> {
    return std::make_unique<ReferencePairSum<decltype(w)>>(w);
  });
}

}  // namespace cpm

// The exact pair Hessians of solvers/pair_hessian.hpp against central differences of the pair
// gradient (the reference sum), for every kernel kind in d = 1, 2, 3 and the generic d = 4 path;
// the diagonal blocks against pair() summed; and the sums' independence of the thread count.
#include "solvers/pair_hessian.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <random>

#include "solvers/interaction_sum.hpp"

namespace cpm {
namespace {

std::vector<InteractionKernel> every_kernel() {
  return {InteractionKernel::power(0.5),
          InteractionKernel::power(1.0),
          InteractionKernel::power(1.3),
          InteractionKernel::power(-0.6),
          InteractionKernel::log(),
          InteractionKernel::linear(),
          InteractionKernel::mollified(0.5, 0.2),
          InteractionKernel::mollified(0.0, 0.3),
          InteractionKernel::quadratic(0.7),
          InteractionKernel::absolute(1.5),
          InteractionKernel::none()};
}

Eigen::MatrixXd random_matrix(Eigen::Index n, Eigen::Index d, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd m(n, d);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = u(rng);
  return m;
}

TEST(PairHessian, ProductsMatchCentralDifferencesOfThePairGradient) {
  for (const InteractionKernel& kernel : every_kernel())
    for (const int d : {1, 2, 3, 4}) {
      if (kernel.kind == InteractionKernel::Kind::linear && d != 1) continue;
      const Eigen::Index n = 37;
      const Eigen::MatrixXd x = random_matrix(n, d, 3 + d);
      const Eigen::MatrixXd v = random_matrix(n, d, 11 + d);
      auto hessian = make_pair_hessian(kernel);
      Eigen::MatrixXd hv;
      hessian->apply(x, v, hv);
      auto sum = make_reference_pair_sum(kernel);
      const double eps = 1e-6;
      Eigen::MatrixXd plus(n, d), minus(n, d);
      const Eigen::MatrixXd xp = x + eps * v, xm = x - eps * v;
      sum->compute(xp, plus, nullptr);
      sum->compute(xm, minus, nullptr);
      const Eigen::MatrixXd fd = (plus - minus) / (2 * eps);
      const double scale = std::max(1.0, fd.cwiseAbs().maxCoeff());
      EXPECT_LT((hv - fd).cwiseAbs().maxCoeff(), 1e-5 * scale) << kernel.describe() << " d=" << d;

      Eigen::MatrixXd blocks;
      hessian->diagonal_blocks(x, blocks);
      for (Eigen::Index k = 0; k < n; k += 9) {
        Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(d, d);
        for (Eigen::Index l = 0; l < n; ++l)
          if (l != k) expected += hessian->pair((x.row(k) - x.row(l)).transpose());
        for (int a = 0; a < d; ++a)
          for (int b = 0; b < d; ++b)
            EXPECT_NEAR(blocks(k, a * d + b), expected(a, b), 1e-10 * (1 + expected.norm()))
                << kernel.describe() << " d=" << d << " k=" << k;
      }
    }
}

TEST(PairHessian, SumsDoNotDependOnTheThreadCount) {
  const int saved = omp_get_max_threads();
  const Eigen::MatrixXd x = random_matrix(3000, 2, 5), v = random_matrix(3000, 2, 6);
  auto hessian = make_pair_hessian(InteractionKernel::power(0.5));
  Eigen::MatrixXd one, two, blocks_one, blocks_two;
  omp_set_num_threads(1);
  hessian->apply(x, v, one);
  hessian->diagonal_blocks(x, blocks_one);
  omp_set_num_threads(2);
  hessian->apply(x, v, two);
  hessian->diagonal_blocks(x, blocks_two);
  omp_set_num_threads(saved);
  EXPECT_TRUE((one.array() == two.array()).all());
  EXPECT_TRUE((blocks_one.array() == blocks_two.array()).all());
}

}  // namespace
}  // namespace cpm

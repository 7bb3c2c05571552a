// Cell-integrated weights K_m = ∫_{C_m} W: exact 1D integrals, the singular cell in 2D/3D by
// the pyramid formula, the regular cells by Gauss–Legendre — each against an independent
// computation.
#include "solvers/cell_integrated_kernel.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/quadrature.hpp"

namespace cpm {
namespace {

using Kernel = InteractionKernel;

double adaptive_cell_integral_1d(const Kernel& k, double h, int m) {
  auto f = [&](double z) { return visit(k, [&](auto w) { return w.value_r2(z * z); }); };
  if (m == 0) return 2.0 * integrate_adaptive(f, 0.0, 0.5 * h, 1e-13);
  return integrate_adaptive(f, (m - 0.5) * h, (m + 0.5) * h, 1e-13);
}

TEST(CellIntegratedKernel, OneDimensionalWeightsEqualAdaptiveQuadratureOfW) {
  const Kernel kernels[] = {Kernel::power(0.5),
                            Kernel::power(-1.3),
                            Kernel::log(),
                            Kernel::linear(),
                            Kernel::quadratic(1.5),
                            Kernel::absolute(0.7),
                            Kernel::mollified(0.5, 0.1),
                            Kernel::mollified(0.0, 0.02)};
  const double h = 0.1;
  for (const Kernel& k : kernels)
    for (int m : {0, 1, 2, 7, 40, -3}) {
      const double expected = adaptive_cell_integral_1d(k, h, std::abs(m));
      const double got =
          cell_integral(k, Eigen::VectorXd::Constant(1, h), Eigen::VectorXi::Constant(1, m));
      EXPECT_NEAR(got, expected, 1e-11 * std::max(1.0, std::abs(expected)))
          << k.describe() << " m=" << m;
    }
}

// Splitting the cell C_0(h) into 3^d cells of side h/3: the centre one is C_0(h/3), and for
// W = |z|^{-s}, K_0(h/3) = 3^{s−d} K_0(h), so K_0(h) = S / (1 − 3^{s−d}) with S the sum over the
// 3^d − 1 regular sub-cells. For W = −log|z|, K_0(h/3) = 3^{−d}(K_0(h) + |C_0(h)| log 3).
double self_similar_singular_cell(const Kernel& k, const Eigen::VectorXd& h) {
  const int d = static_cast<int>(h.size());
  const Eigen::VectorXd third = h / 3.0;
  double regular = 0.0;
  const int count = static_cast<int>(std::pow(3, d));
  for (int flat = 0; flat < count; ++flat) {
    Eigen::VectorXi m(d);
    int rest = flat;
    for (int a = 0; a < d; ++a) {
      m[a] = rest % 3 - 1;
      rest /= 3;
    }
    if ((m.array() == 0).all()) continue;
    regular += cell_integral(k, third, m);
  }
  const double scale = std::pow(3.0, -d);
  if (k.kind == Kernel::Kind::log)
    return (regular + scale * h.prod() * std::log(3.0)) / (1.0 - scale);
  return regular / (1.0 - std::pow(3.0, k.s - d));
}

TEST(CellIntegratedKernel, SingularCellOfRieszAndLogKernelsObeysSelfSimilarity) {
  struct Case {
    Kernel kernel;
    Eigen::VectorXd h;
  };
  const Case cases[] = {
      {Kernel::log(), Eigen::Vector2d(0.1, 0.1)},
      {Kernel::power(1.2), Eigen::Vector2d(0.1, 0.1)},
      {Kernel::power(1.9), Eigen::Vector2d(0.2, 0.2)},
      {Kernel::power(0.5), Eigen::Vector2d(0.1, 0.04)},
      {Kernel::power(1.0), Eigen::Vector3d(0.1, 0.1, 0.1)},
      {Kernel::power(1.5), Eigen::Vector3d(0.1, 0.1, 0.1)},
      {Kernel::power(2.5), Eigen::Vector3d(0.1, 0.1, 0.1)},
      {Kernel::log(), Eigen::Vector3d(0.1, 0.05, 0.2)},
  };
  for (const Case& c : cases) {
    const Eigen::VectorXi zero = Eigen::VectorXi::Zero(c.h.size());
    const double got = cell_integral(c.kernel, c.h, zero);
    const double expected = self_similar_singular_cell(c.kernel, c.h);
    EXPECT_NEAR(got, expected, 1e-10 * std::abs(expected))
        << c.kernel.describe() << " d=" << c.h.size();
  }
}

TEST(CellIntegratedKernel, CoulombSelfIntegralOfTheUnitCubeIsTheKnownConstant) {
  // ∫_{[−1/2,1/2]³} 1/|z| dz = 3 log((√3+1)/(√3−1)) − π/2 (a classical closed form).
  const double expected =
      3.0 * std::log((std::sqrt(3.0) + 1.0) / (std::sqrt(3.0) - 1.0)) - M_PI / 2.0;
  EXPECT_NEAR(cell_integral(Kernel::power(1.0), Eigen::Vector3d::Ones(), Eigen::Vector3i::Zero()),
              expected, 1e-12);
}

// Brute force: 8 sub-cells per axis with 12 Gauss points each.
double brute_force_regular_cell(const Kernel& k, const Eigen::VectorXd& h,
                                const Eigen::VectorXi& m) {
  const int d = static_cast<int>(h.size());
  const GaussLegendreRule rule = gauss_legendre(12);
  std::vector<double> x[3], w[3];
  for (int a = 0; a < 3; ++a) {
    if (a >= d) {
      x[a] = {0.0};
      w[a] = {1.0};
      continue;
    }
    const double width = h[a] / 8.0;
    for (int p = 0; p < 8; ++p)
      for (int i = 0; i < 12; ++i) {
        x[a].push_back((m[a] - 0.5) * h[a] + (p + 0.5 + 0.5 * rule.nodes[i]) * width);
        w[a].push_back(0.5 * width * rule.weights[i]);
      }
  }
  return visit(k, [&](auto kernel) {
    double s = 0.0;
    for (std::size_t i = 0; i < x[0].size(); ++i)
      for (std::size_t j = 0; j < x[1].size(); ++j)
        for (std::size_t l = 0; l < x[2].size(); ++l)
          s += w[0][i] * w[1][j] * w[2][l] *
               kernel.value_r2(x[0][i] * x[0][i] + x[1][j] * x[1][j] + x[2][l] * x[2][l]);
    return s;
  });
}

TEST(CellIntegratedKernel, RegularCellsEqualBruteForceQuadrature) {
  const Kernel kernels[] = {Kernel::log(), Kernel::power(1.2), Kernel::absolute(1.0),
                            Kernel::mollified(1.0, 0.05)};
  for (const Kernel& k : kernels) {
    for (const Eigen::Vector2i& m :
         {Eigen::Vector2i(1, 0), Eigen::Vector2i(1, 1), Eigen::Vector2i(-2, 3),
          Eigen::Vector2i(9, 4), Eigen::Vector2i(30, 2)}) {
      const Eigen::Vector2d h(0.1, 0.07);
      const double expected = brute_force_regular_cell(k, h, m);
      EXPECT_NEAR(cell_integral(k, h, m), expected, 1e-10 * std::abs(expected))
          << k.describe() << " m=" << m.transpose();
    }
    for (const Eigen::Vector3i& m :
         {Eigen::Vector3i(1, 0, 0), Eigen::Vector3i(1, 1, 1), Eigen::Vector3i(5, 2, 0)}) {
      const Eigen::Vector3d h(0.1, 0.1, 0.1);
      const double expected = brute_force_regular_cell(k, h, m);
      EXPECT_NEAR(cell_integral(k, h, m), expected, 1e-10 * std::abs(expected))
          << k.describe() << " m=" << m.transpose();
    }
  }
}

TEST(CellIntegratedKernel, TableHoldsEveryOffsetAndIsEvenInEachCoordinate) {
  const Eigen::Vector2d h(0.1, 0.2);
  const CellIntegratedKernel table(Kernel::power(0.7), h, Eigen::Vector2i(6, 4));
  ASSERT_EQ(table.table().size(), 24u);
  for (int i = -5; i <= 5; ++i)
    for (int j = -3; j <= 3; ++j) {
      const int offset[2] = {i, j};
      EXPECT_DOUBLE_EQ(table(offset), cell_integral(Kernel::power(0.7), h, Eigen::Vector2i(i, j)));
    }
}

}  // namespace
}  // namespace cpm

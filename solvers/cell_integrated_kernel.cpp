#include "solvers/cell_integrated_kernel.hpp"

#include <array>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <type_traits>

#include "core/quadrature.hpp"

namespace cpm {

namespace {

using Kind = InteractionKernel::Kind;

// Gauss–Legendre nodes and weights along each of up to three axes; absent axes hold one node
// at 0 with weight 1, so every loop below runs over three axes.
struct AxisNodes {
  std::array<std::vector<double>, 3> x, w;
};

void add_nodes(std::vector<double>& x, std::vector<double>& w, const GaussLegendreRule& rule,
               double lo, double hi, int pieces) {
  const double width = (hi - lo) / pieces;
  for (int p = 0; p < pieces; ++p) {
    const double mid = lo + (p + 0.5) * width;
    for (std::size_t i = 0; i < rule.nodes.size(); ++i) {
      x.push_back(mid + 0.5 * width * rule.nodes[i]);
      w.push_back(0.5 * width * rule.weights[i]);
    }
  }
}

void pad_axes(AxisNodes& n, int d) {
  for (int a = d; a < 3; ++a) {
    n.x[a] = {0.0};
    n.w[a] = {1.0};
  }
}

// The rules used for the regular cells (m ≠ 0), by distance to the singularity.
struct RegularCellRules {
  GaussLegendreRule q10 = gauss_legendre(10), q8 = gauss_legendre(8), q5 = gauss_legendre(5),
                    q3 = gauss_legendre(3);
};

// ∫ W over the cell m∘h + [−h/2, h/2]^d for m ≠ 0 by tensor Gauss–Legendre. With r the distance
// from the singularity to the cell in units of the largest side, the rule's error decays like
// (1 + 2r + …)^{−2q}; the choices below keep it near 1e-12 relative or smaller.
template <class Evaluator>
double regular_cell_integral(const Evaluator& w, const Eigen::VectorXd& h, const int* m,
                             const RegularCellRules& rules) {
  const int d = static_cast<int>(h.size());
  double dist2 = 0.0;
  for (int a = 0; a < d; ++a) {
    const double gap = std::max(0.0, (std::abs(m[a]) - 0.5) * h[a]);
    dist2 += gap * gap;
  }
  const double r = std::sqrt(dist2) / h.maxCoeff();
  const GaussLegendreRule* rule = &rules.q3;
  int pieces = 1;
  if (r < 1.0) {
    rule = &rules.q10;
    pieces = 2;
  } else if (r < 4.0) {
    rule = &rules.q8;
  } else if (r < 16.0) {
    rule = &rules.q5;
  }
  // At most 2 pieces × 10 nodes per axis; absent axes hold one node at 0 with weight 1.
  double x[3][20], wt[3][20];
  int count[3] = {1, 1, 1};
  for (int a = 0; a < 3; ++a) x[a][0] = 0.0, wt[a][0] = 1.0;
  const int q = static_cast<int>(rule->nodes.size());
  for (int a = 0; a < d; ++a) {
    const double width = h[a] / pieces;
    count[a] = pieces * q;
    for (int p = 0; p < pieces; ++p) {
      const double mid = (m[a] - 0.5) * h[a] + (p + 0.5) * width;
      for (int i = 0; i < q; ++i) {
        x[a][p * q + i] = mid + 0.5 * width * rule->nodes[i];
        wt[a][p * q + i] = 0.5 * width * rule->weights[i];
      }
    }
  }
  double sum = 0.0;
  for (int k = 0; k < count[2]; ++k)
    for (int j = 0; j < count[1]; ++j) {
      double row = 0.0;
      const double r2_jk = x[1][j] * x[1][j] + x[2][k] * x[2][k];
      for (int i = 0; i < count[0]; ++i) row += wt[0][i] * w.value_r2(x[0][i] * x[0][i] + r2_jk);
      sum += wt[1][j] * wt[2][k] * row;
    }
  return sum;
}

// K_0 for d ≥ 2 by the pyramid decomposition (see the header): face a is the face x_a = h_a/2;
// by symmetry, 2 faces per axis and 2^{d−1} equal quarters of each face.
template <class Evaluator>
double singular_cell_integral(const Evaluator& w, const Eigen::VectorXd& h) {
  const int d = static_cast<int>(h.size());
  static const GaussLegendreRule rule = gauss_legendre(16);
  double total = 0.0;
  for (int a = 0; a < d; ++a) {
    const double apex = 0.5 * h[a];
    AxisNodes n;
    int axis = 0;
    for (int b = 0; b < d; ++b) {
      if (b == a) continue;
      // Pieces no longer than h_a keep the integrand's complex singularity (at |u| = i h_a/2)
      // a fixed relative distance away.
      const int pieces = std::max(1, static_cast<int>(std::ceil(h[b] / h[a])));
      add_nodes(n.x[axis], n.w[axis], rule, 0.0, 0.5 * h[b], pieces);
      ++axis;
    }
    pad_axes(n, d - 1);
    double face = 0.0;
    for (std::size_t j = 0; j < n.x[1].size(); ++j)
      for (std::size_t i = 0; i < n.x[0].size(); ++i) {
        const double rho = std::sqrt(apex * apex + n.x[0][i] * n.x[0][i] + n.x[1][j] * n.x[1][j]);
        face += n.w[0][i] * n.w[1][j] * w.radial_moment(d, rho) * apex * std::pow(rho, -d);
      }
    total += 2.0 * std::pow(2.0, d - 1) * face;
  }
  return total;
}

// K_m in 1D: the difference of the antiderivative G_1 at the cell's ends. The mollified kernel's
// G_1 is itself a quadrature, so its cells are integrated directly instead (a difference of two
// quadratures from 0 would lose the far cells' accuracy).
template <class Evaluator>
double one_dimensional_cell_integral(const Evaluator& w, double h, int m) {
  const double lo = (std::abs(m) - 0.5) * h, hi = (std::abs(m) + 0.5) * h;
  if constexpr (std::is_same_v<Evaluator, RieszMollified>) {
    auto f = [&](double z) { return w.value_r2(z * z); };
    return m == 0 ? 2.0 * integrate_adaptive(f, 0.0, hi) : integrate_adaptive(f, lo, hi);
  } else {
    if (m == 0) return 2.0 * w.radial_moment(1, hi);
    return w.radial_moment(1, hi) - w.radial_moment(1, lo);
  }
}

}  // namespace

double radial_moment(const InteractionKernel& kernel, int d, double rho) {
  return visit(kernel, [&](const auto& w) { return w.radial_moment(d, rho); });
}

double cell_integral(const InteractionKernel& kernel, const Eigen::VectorXd& h,
                     const Eigen::VectorXi& m) {
  const int d = static_cast<int>(h.size());
  if (m.size() != d) throw std::invalid_argument("cell offset and spacing differ in dimension");
  if (kernel.kind == Kind::none) return 0.0;
  static const RegularCellRules rules;
  return visit(kernel, [&](const auto& w) {
    if (d == 1) return one_dimensional_cell_integral(w, h[0], m[0]);
    if ((m.array() == 0).all()) return singular_cell_integral(w, h);
    return regular_cell_integral(w, h, m.data(), rules);
  });
}

CellIntegratedKernel::CellIntegratedKernel(const InteractionKernel& kernel, Eigen::VectorXd spacing,
                                           Eigen::VectorXi extent)
    : kernel_(kernel), spacing_(std::move(spacing)), extent_(std::move(extent)) {
  const int d = dim();
  if (d < 1 || d > 3 || spacing_.size() != d || (extent_.array() < 1).any())
    throw std::invalid_argument("cell-integrated kernel needs d = 1..3 and positive extents");
  Eigen::Index size = 1;
  for (int a = 0; a < d; ++a) size *= extent_[a];
  table_.assign(static_cast<std::size_t>(size), 0.0);
  if (kernel_.kind == Kind::none) return;
  visit(kernel_, [&](const auto& w) {
    if (d == 1) {
      for (Eigen::Index m = 0; m < size; ++m)
        table_[m] = one_dimensional_cell_integral(w, spacing_[0], static_cast<int>(m));
      return 0;
    }
    table_[0] = singular_cell_integral(w, spacing_);
    const RegularCellRules rules;
#pragma omp parallel for schedule(dynamic, 256)
    for (Eigen::Index flat = 1; flat < size; ++flat) {
      int m[3] = {0, 0, 0};
      Eigen::Index rest = flat;
      for (int a = 0; a < d; ++a) {
        m[a] = static_cast<int>(rest % extent_[a]);
        rest /= extent_[a];
      }
      table_[flat] = regular_cell_integral(w, spacing_, m, rules);
    }
    return 0;
  });
}

double CellIntegratedKernel::operator()(const int* offset) const {
  Eigen::Index flat = 0, stride = 1;
  for (int a = 0; a < dim(); ++a) {
    flat += stride * std::abs(offset[a]);
    stride *= extent_[a];
  }
  return table_[flat];
}

}  // namespace cpm

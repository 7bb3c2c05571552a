// The plain loop one writes without the blocked sum: OpenMP threads over the rows (static
// schedule), `omp simd` over each row's partners (every ordered pair, the self term skipped by
// splitting the range), positions read from the columns of x, and the kernel's closed form:
// h = 1/r² (log), 1/(2 r² ⁴√r²) by two square roots (s = 1/2), s·pow(r², −s/2 − 1) otherwise.
// This file alone is compiled with -ffast-math (CMakeLists.txt): without it GCC keeps a branch
// for errno around each square root and glibc declares no vector pow, so neither loop would be
// vectorised. With it, both are (glibc's libmvec: _ZGVdN4vv_pow on AVX2, _ZGVeN8vv_pow on
// AVX-512), which makes this the stronger baseline.
#include "bench/plain_pair_sum.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace {

class PlainSimdPairSum final : public cpm::InteractionSum {
 public:
  explicit PlainSimdPairSum(double s) : s_(s) {}

  void compute(const Eigen::MatrixXd& x, Eigen::MatrixXd& gradient, double*) override {
    switch (x.cols()) {
      case 1:
        kernel<1>(x, gradient);
        break;
      case 2:
        kernel<2>(x, gradient);
        break;
      case 3:
        kernel<3>(x, gradient);
        break;
      default:
        throw std::invalid_argument("the plain loop is written for d = 1, 2, 3");
    }
  }
  std::string name() const override { return "plain simd"; }

 private:
  template <int D>
  void kernel(const Eigen::MatrixXd& x, Eigen::MatrixXd& gradient) const {
    if (s_ == 0.0) return rows<D>(x, gradient, [](double r2) { return 1.0 / r2; });
    if (s_ == 0.5)
      return rows<D>(x, gradient, [](double r2) { return 0.5 / (r2 * std::sqrt(std::sqrt(r2))); });
    const double s = s_, p = -0.5 * s_ - 1.0;
    rows<D>(x, gradient, [s, p](double r2) { return s * std::pow(r2, p); });
  }

  // Row k of the gradient: Σ_{l≠k} ∇W(x_k − x_l) = −Σ h(r²) (x_k − x_l).
  template <int D, class H>
  static void rows(const Eigen::MatrixXd& x, Eigen::MatrixXd& gradient, H h) {
    const Eigen::Index n = x.rows();
    const double* c[3] = {x.col(0).data(), D > 1 ? x.col(1).data() : nullptr,
                          D > 2 ? x.col(2).data() : nullptr};
#pragma omp parallel for schedule(static)
    for (Eigen::Index k = 0; k < n; ++k) {
      double g0 = 0.0, g1 = 0.0, g2 = 0.0;
      for (const auto& range : {std::pair{Eigen::Index{0}, k}, std::pair{k + 1, n}}) {
        // Plain variables: clang does not let an OpenMP loop name a structured binding.
        const Eigen::Index lo = range.first, hi = range.second;
#pragma omp simd reduction(+ : g0, g1, g2)
        for (Eigen::Index l = lo; l < hi; ++l) {
          const double z0 = c[0][k] - c[0][l];
          if constexpr (D == 1) {
            g0 -= h(z0 * z0) * z0;
          } else if constexpr (D == 2) {
            const double z1 = c[1][k] - c[1][l];
            const double f = h(z0 * z0 + z1 * z1);
            g0 -= f * z0;
            g1 -= f * z1;
          } else {
            const double z1 = c[1][k] - c[1][l], z2 = c[2][k] - c[2][l];
            const double f = h(z0 * z0 + z1 * z1 + z2 * z2);
            g0 -= f * z0;
            g1 -= f * z1;
            g2 -= f * z2;
          }
        }
      }
      gradient(k, 0) = g0;
      if constexpr (D > 1) gradient(k, 1) = g1;
      if constexpr (D > 2) gradient(k, 2) = g2;
    }
  }

  double s_;
};

}  // namespace

std::unique_ptr<cpm::InteractionSum> make_plain_simd_pair_sum(double s) {
  return std::make_unique<PlainSimdPairSum>(s);
}

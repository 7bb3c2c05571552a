#pragma once
// Distances between the empirical measure of N particles, μ_N = (1/N) Σ_k δ_{x_k}, and the
// piecewise-constant density ρ of a grid solver (cell averages on a Grid, docs/numerics.md §3). The
// grid density is normalised to unit mass first, so both are probability measures.
#include <Eigen/Dense>
#include <vector>

#include "core/grid.hpp"

namespace cpm {

struct Wasserstein1D {
  double w1 = 0.0, w2 = 0.0;
};

// d = 1, exact: W_p^p = ∫_0^1 |F_N^{-1}(u) − G^{-1}(u)|^p du with the sorted particles as F_N^{-1}
// and the piecewise-linear quantile function G^{-1} of the piecewise-constant density; the
// integral is summed in closed form on the common refinement of both breakpoint sets.
Wasserstein1D wasserstein_1d(const Eigen::VectorXd& samples, const Grid& grid,
                             const std::vector<double>& density);

// A fixed set of unit directions in R^d: d = 1 the axis; d = 2 the angles π(k + ½)/count;
// d ≥ 3 Gaussian vectors, normalised, from a fixed seed. (count, d) matrix.
Eigen::MatrixXd slicing_directions(int d, int count);

// Sliced Wasserstein-2: SW2² = mean over directions θ of W2²(θ·μ_N, θ·ρ). In d = 1 it is W2
// exactly. In d ≥ 2 each cell is represented by q^d equal-mass points at the centres of its
// q^d sub-cells (q = points_per_axis), which changes SW2 by at most h/(2q).
double sliced_wasserstein2(const Eigen::MatrixXd& x, const Grid& grid,
                           const std::vector<double>& density, const Eigen::MatrixXd& directions,
                           int points_per_axis = 2);

// Maximum mean discrepancy with the Gaussian kernel k(x, y) = exp(−|x − y|²/(2σ²)),
//     MMD² = ∬k dμ_N dμ_N − 2 ∬k dμ_N dρ + ∬k dρ dρ,
// the particle–particle term summed directly (O(N²), the V-statistic) and the terms with ρ
// integrated exactly over the cells (erf and its antiderivative, kernel truncated at 9σ).
double mmd_gaussian(const Eigen::MatrixXd& x, const Grid& grid, const std::vector<double>& density,
                    double bandwidth);

// Σ_c |n_c/N − m_c| with n_c the particles in cell c and m_c = h^d ρ_c the cell's mass, plus the
// fraction of particles outside the grid: the L1 distance between the particle histogram on the
// grid and the cell averages.
double histogram_l1(const Eigen::MatrixXd& x, const Grid& grid, const std::vector<double>& density);

}  // namespace cpm

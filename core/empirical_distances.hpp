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

// The pieces of the sums above that the distances over MPI ranks (parallel/spread_distances.hpp)
// evaluate the same way on their parts of the particles and the density.

// Adds ∫_0^L |x − g(u)|^p du, p = 1 to sum.w1 and p = 2 to sum.w2, for g linear over [0, L] with
// a = x − g(0), b = x − g(L): one piece of W1 and W2² on the common refinement of the quantiles.
void add_linear_piece(double length, double a, double b, Wasserstein1D& sum);

// The atoms that stand for `cells` (indices of `grid`) in the sliced W2: q^d points per cell at
// the centres of its sub-cells, cell after cell, sub-cell s = Σ_a i_a q^a ((cells.size() q^d, d)).
Eigen::MatrixXd sub_cell_atoms(const Grid& grid, const std::vector<Eigen::Index>& cells, int q);

// The MMD's Gaussian kernel averaged over one axis of a cell [lo, lo + h), from a point x:
//     (1/h) ∫_lo^{lo+h} e^{−(y − x)²/(2σ²)} dy = σ√(π/2)/h [erf((lo + h − x)s) − erf((lo − x)s)],
// with s = 1/(σ√2) (erf_scale).
double gaussian_cell_average(double x, double lo, double h, double sigma, double erf_scale);

// The same kernel averaged over a pair of cells Δ apart along one axis of spacing h,
// (1/h²) ∫∫ k(y − y') over y in cell i + Δ, y' in cell i.
double cell_pair_kernel(int delta, double h, double sigma);

// How many cells either side of a point's cell the MMD's kernel reaches along an axis of spacing h
// (it is truncated at 9σ).
int gaussian_window(double h, double sigma);

}  // namespace cpm

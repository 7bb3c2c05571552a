#pragma once
// The particle-mesh interaction sum for d ≤ 3: O(N + M log M) instead of O(N²).
//   1. deposit: each particle puts unit mass on the 2^d cell centres around it with cloud-in-cell
//      (multilinear) weights w_c(x), as a density (mass / cell volume);
//   2. φ = K ∗ ρ with the cell-integrated kernel, by the grid solver's zero-padded FFT
//      convolution (solvers/fft_convolution.hpp), so φ_c ≈ Σ_l W(x_c − x_l);
//   3. ∂_a φ by centred differences at the cell centres;
//   4. interpolate back with the same weights: row k of the gradient is Σ_c w_c(x_k) ∂φ_c,
//      and the pair energy Σ_k Σ_c w_c(x_k) φ_c;
//   5. correct the near field (solvers/particle_mesh_near_field.hpp): for pairs whose stencil
//      base cells are at most `near_cells` cells apart along every axis, the force and energy
//      the mesh transmits are subtracted exactly and the exact pair terms added (P³M). This
//      also removes each particle's own contribution, so the self term k = l is excluded as in
//      the direct sums.
// Every mesh step is second order in the spacing h for pairs a few cells apart; pairs closer
// than a few cells see the kernel smoothed over a cell, which the correction repairs. With
// near_cells = −1 only the self term is removed (the plain mesh). Positions must stay inside the
// box the sum was built for; the grid adds two cells of margin on every side for the stencils.
#include <memory>

#include "solvers/interaction_sum.hpp"

namespace cpm {

// Particles in [lower, upper] (d = 1, 2, 3) on a grid of `cells` cells per axis, margin
// included, with pairs up to near_cells ∈ {−1, 0, …, 3} cells apart made exact (see above).
std::unique_ptr<InteractionSum> make_particle_mesh_sum(const InteractionKernel& kernel,
                                                       const Eigen::VectorXd& lower,
                                                       const Eigen::VectorXd& upper,
                                                       const Eigen::VectorXi& cells,
                                                       int near_cells);

// The recommended near range for the corrected sum: 3 cells in 1D (each costs little there),
// 2 in 2D and 3D. In 2D (log kernel, N = 10⁶ uniform, 512² cells) it brings the force error
// from 5.5·10⁻³ (plain mesh) to 6·10⁻⁵; bench/RESULTS.md lists each range's error and cost.
int default_near_cells(int d);

// A default grid for n particles in d dimensions: per axis the power of two nearest to
// n^{1/d} / 2 (about four particles per cell in 2D), between 32 and 2^20 / 2^9 / 2^6 for
// d = 1 / 2 / 3.
Eigen::VectorXi default_mesh_cells(Eigen::Index n, int d);

}  // namespace cpm

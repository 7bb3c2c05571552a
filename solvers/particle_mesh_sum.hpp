#pragma once
// The particle-mesh interaction sum for d ≤ 3: O(N + M log M) instead of O(N²).
//   1. deposit: each particle puts unit mass on the 2^d cell centres around it with cloud-in-cell
//      (multilinear) weights w_c(x), as a density (mass / cell volume);
//   2. φ = K ∗ ρ with the cell-integrated kernel, by the grid solver's zero-padded FFT
//      convolution (solvers/fft_convolution.hpp), so φ_c ≈ Σ_l W(x_c − x_l);
//   3. ∂_a φ by centred differences at the cell centres;
//   4. interpolate back with the same weights: row k of the gradient is Σ_c w_c(x_k) ∂φ_c,
//      and the pair energy Σ_k Σ_c w_c(x_k) φ_c;
//   5. remove each particle's own contribution (its deposit carried through steps 2–4, which
//      only needs K near the origin), so the self term k = l is excluded as in the direct sums.
// Every step is second order in the spacing h for pairs a few cells apart; pairs closer than a
// few cells see the kernel smoothed over a cell. Positions must stay inside the box the sum was
// built for; the grid adds two cells of margin on every side for the stencils.
#include <memory>

#include "solvers/interaction_sum.hpp"

namespace cpm {

// Particles in [lower, upper] (d = 1, 2, 3) on a grid of `cells` cells per axis, margin included.
std::unique_ptr<InteractionSum> make_particle_mesh_sum(const InteractionKernel& kernel,
                                                       const Eigen::VectorXd& lower,
                                                       const Eigen::VectorXd& upper,
                                                       const Eigen::VectorXi& cells);

// A default grid for n particles in d dimensions: per axis the power of two nearest to
// n^{1/d} / 2 (about four particles per cell in 2D), between 32 and 2^20 / 2^9 / 2^6 for
// d = 1 / 2 / 3.
Eigen::VectorXi default_mesh_cells(Eigen::Index n, int d);

}  // namespace cpm

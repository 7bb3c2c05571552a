#pragma once
// Densities on a Grid, stored as cell averages (mass per unit volume, Grid order, 0 in masked
// cells): building them from a pointwise density, their mass and moments, and sampling
// particles from them. The density they describe is piecewise constant.
#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/grid.hpp"
#include "core/particles.hpp"

namespace cpm {

// Average of f over every active cell by a q^d-point Gauss–Legendre rule; masked cells get 0.
std::vector<double> cell_averages(const Grid& grid,
                                  const std::function<double(const Eigen::VectorXd&)>& f,
                                  int points_per_axis = 4);

// Σ_c h^d ρ_c.
double density_mass(const Grid& grid, const std::vector<double>& density);

// Mean and covariance of the piecewise-constant density normalised to unit mass; the
// covariance includes the within-cell variance h_a²/12 on the diagonal.
Eigen::VectorXd density_mean(const Grid& grid, const std::vector<double>& density);
Eigen::MatrixXd density_covariance(const Grid& grid, const std::vector<double>& density);

// N i.i.d. points from the normalised piecewise-constant density: a cell with probability
// proportional to its mass, then uniform inside it. Point k uses the stream
// (seed, initial_positions, replica, k), so the sample does not depend on the thread count.
Particles sample_from_density(const Grid& grid, const std::vector<double>& density, Eigen::Index n,
                              std::uint64_t seed, std::uint64_t replica);
// The n particles with ids first_id, …, first_id + n − 1 of that sample, ids recorded (a rank's
// share of a system spread over ranks).
Particles sample_ids_from_density(const Grid& grid, const std::vector<double>& density,
                                  std::uint64_t first_id, Eigen::Index n, std::uint64_t seed,
                                  std::uint64_t replica);

}  // namespace cpm

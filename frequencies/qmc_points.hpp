#pragma once
// Low-discrepancy point sets in [0, 1)^d and their randomisations (docs/features.md §3).
// Sobol' points come from Boost.Random's sobol engine (Joe–Kuo direction numbers, 64-bit
// coordinates, after the origin, which the engine leaves out and which is put back here: the
// first 2^m points then form a (t, m, d)-net, one point in each interval [j/2^m, (j+1)/2^m) of
// every coordinate); Halton points are radical inverses
// of the indices 0, 1, 2, … in the first d prime bases (the origin first, as for Sobol').
// Randomised, each point set stays a low-discrepancy set while every point becomes uniform on the
// cube, so averages over it are unbiased:
//   - Sobol': a digital shift, each coordinate's 64 bits XOR-ed with one random word;
//   - Halton: a Cranley–Patterson rotation, each coordinate shifted by one uniform, modulo 1.
// The shifts are drawn from the stream (seed, qmc_randomisation, replica, coordinate).
#include <Eigen/Dense>
#include <cstdint>

namespace cpm {

// The first n Sobol' points in d dimensions, the origin first, (n, d); d ≤ 3667.
Eigen::MatrixXd sobol_points(Eigen::Index n, int d);
// The Halton points of indices 0..n−1, (n, d); d ≤ 1000.
Eigen::MatrixXd halton_points(Eigen::Index n, int d);

// Randomised point sets in the open cube (0, 1)^d.
Eigen::MatrixXd shifted_sobol_points(Eigen::Index n, int d, std::uint64_t seed,
                                     std::uint64_t replica);
Eigen::MatrixXd shifted_halton_points(Eigen::Index n, int d, std::uint64_t seed,
                                      std::uint64_t replica);

}  // namespace cpm

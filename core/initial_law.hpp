#pragma once
// Initial laws of the particles (and, through density(), of the grid solver).
#include <Eigen/Dense>
#include <cstdint>
#include <string>

#include "core/particles.hpp"

namespace cpm {

struct InitialLaw {
  enum class Kind { gaussian, uniform_ball, uniform_box };
  Kind kind = Kind::gaussian;
  Eigen::VectorXd centre;        // mean of the Gaussian, centre of the ball
  double scale = 1.0;            // Gaussian standard deviation per coordinate, or ball radius
  Eigen::VectorXd lower, upper;  // uniform_box corners

  // Probability density at a point (for the grid solver's initial condition).
  double density(const Eigen::Ref<const Eigen::VectorXd>& point) const;
  std::string describe() const;
};

// N particles drawn i.i.d. from the law; particle k uses the stream (seed, replica, k), so the
// sample does not depend on the thread count.
Particles sample_particles(const InitialLaw& law, Eigen::Index n, std::uint64_t seed,
                           std::uint64_t replica);
// The n particles with ids first_id, …, first_id + n − 1 of that sample, ids recorded: a rank's
// share of a system spread over ranks (the shares of all ranks together are the sample).
Particles sample_particle_ids(const InitialLaw& law, std::uint64_t first_id, Eigen::Index n,
                              std::uint64_t seed, std::uint64_t replica);

}  // namespace cpm

// Uses the installed library through its public headers: particles drawn from an initial law,
// projected into a ball, their mean and covariance; prints "consumer ok" on success.
#include <cpm/core/domain.hpp>
#include <cpm/core/initial_law.hpp>
#include <cpm/core/observables.hpp>
#include <cpm/core/particles.hpp>
#include <cpm_version.hpp>

#include <cmath>
#include <iostream>

int main() {
  cpm::InitialLaw law;
  law.kind = cpm::InitialLaw::Kind::gaussian;
  law.centre = Eigen::VectorXd::Zero(2);
  law.scale = 0.5;
  cpm::Particles particles = cpm::sample_particles(law, 2000, 42, 0);
  const cpm::Domain ball = cpm::Domain::ball(Eigen::VectorXd::Zero(2), 1.0);
  ball.project_all(particles.positions);
  const Eigen::VectorXd mean = cpm::ensemble_mean(particles.positions);
  const double radius = particles.positions.rowwise().norm().maxCoeff();
  std::cout << "cpm " << CPM_VERSION << ": " << particles.positions.rows() << " particles, mean ("
            << mean.transpose() << "), largest radius " << radius << '\n';
  if (particles.positions.rows() != 2000 || radius > 1.0 + 1e-12 || mean.norm() > 0.1) return 1;
  std::cout << "consumer ok\n";
  return 0;
}

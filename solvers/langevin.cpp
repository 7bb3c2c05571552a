#include "solvers/langevin.hpp"

#include <cmath>
#include <stdexcept>

#include "core/random_stream.hpp"

namespace cpm {

namespace {
// Noise draws (about 20 ns each) below which a step runs on one thread.
constexpr Eigen::Index kParallelEntries = Eigen::Index{1} << 13;
}  // namespace

LangevinIntegrator::LangevinIntegrator(ForceField& forces, Domain domain,
                                       LangevinParameters parameters)
    : forces_(forces), domain_(std::move(domain)), parameters_(parameters) {
  if (!(parameters_.step > 0.0)) throw std::invalid_argument("Langevin step must be positive");
  if (!(parameters_.beta > 0.0)) throw std::invalid_argument("beta must be positive");
}

void LangevinIntegrator::step(Particles& particles) {
  Eigen::MatrixXd& x = particles.positions;
  const Eigen::Index n = x.rows(), d = x.cols();
  forces_.compute(x, drift_, nullptr);
  const double eta = parameters_.step;
  const double noise = std::isinf(parameters_.beta) ? 0.0 : std::sqrt(2.0 * eta / parameters_.beta);
  if (noise == 0.0) {
    x -= eta * drift_;
  } else {
#pragma omp parallel for schedule(static) if (n * d > kParallelEntries)
    for (Eigen::Index k = 0; k < n; ++k) {
      RandomStream stream(parameters_.seed, RandomPurpose::langevin_noise, parameters_.replica,
                          particles.id(k), steps_);
      for (Eigen::Index a = 0; a < d; ++a) x(k, a) += -eta * drift_(k, a) + noise * stream.normal();
    }
  }
  domain_.project_all(x);
  forces_.redistribute(particles);
  ++steps_;
}

void LangevinIntegrator::advance_to(Particles& particles, double t) {
  // Step count is rounded so that output times that are multiples of η are hit exactly.
  const auto target = static_cast<std::uint64_t>(std::llround(t / parameters_.step));
  start_advance();
  while (steps_ < target) {
    {
      const GovernedStep governed(governor_);
      step(particles);
    }
    report(time(), parameters_.step, steps_);
    if (steps_ < target && stop_due()) return;
  }
}

IntegratorState LangevinIntegrator::save_state() const {
  return {{"langevin.steps", static_cast<double>(steps_)}};
}

void LangevinIntegrator::restore_state(const IntegratorState& state) {
  const double steps = state_entry(state, "langevin.steps");
  if (!(steps >= 0.0 && steps < 0x1p53 && steps == std::floor(steps)))
    throw std::invalid_argument("solver state langevin.steps is not a step count");
  steps_ = static_cast<std::uint64_t>(steps);
}

}  // namespace cpm

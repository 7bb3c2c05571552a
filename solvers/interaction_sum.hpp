#pragma once
// Interaction sums over particle pairs, the O(N²) heart of the model. Implementations (the
// reference loop, the fast blocked sum, the particle-mesh method) share this narrow interface
// and are tested against one another.
#include <Eigen/Dense>
#include <memory>
#include <string>

#include "core/particles.hpp"
#include "physics/riesz_kernel.hpp"

namespace cpm {

class InteractionSum {
 public:
  virtual ~InteractionSum() = default;
  // For positions x (N, d): row k of `gradient` becomes Σ_{l≠k} ∇W(x_k − x_l) (the self term is
  // excluded). If pair_energy is non-null it receives Σ_{k≠l} W(x_k − x_l) (ordered pairs).
  // `gradient` must already have the shape of x; nothing is allocated per call.
  virtual void compute(const Eigen::MatrixXd& x, Eigen::MatrixXd& gradient,
                       double* pair_energy) = 0;
  virtual std::string name() const = 0;

  // One system spread over ranks (solvers/distributed_pair_sum.hpp) holds a share of the
  // particles in x: these give the whole system's N and totals over every rank (collectives
  // there; here the identity).
  virtual double system_size(Eigen::Index rows) { return static_cast<double>(rows); }
  virtual double total(double local) { return local; }
  // A sum over ranks that owns particles by position (the distributed particle-mesh sum) moves
  // every row to the rank that owns it, after the particles moved; the others need nothing.
  virtual void redistribute(Particles& /*particles*/) {}
};

// The plain scalar double loop, written for clarity: the reference every fast path is tested
// against. Parallel over rows; each row is summed in a fixed order, so results do not depend
// on the thread count.
std::unique_ptr<InteractionSum> make_reference_pair_sum(const InteractionKernel& kernel);

}  // namespace cpm

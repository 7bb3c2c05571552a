#pragma once
// Time stepping limited by accuracy rather than stability, for singular kernels whose stiffness
// grows with N (docs/numerics.md §3.9):
//
// - ImplicitGradientFlowIntegrator (β = ∞): the linearly implicit Rosenbrock method ROS3P
//   (J. Lang, J. Verwer, BIT 41 (2001) 731–738; order 3, embedded order 2, A-stable) with
//   adaptive steps, its stage systems (I/(γh) + J) U = … solved matrix-free by preconditioned
//   conjugate gradients; the constraints active on ∂D at the start of a step restrict the stages,
//   and every stage point and the result are projected onto D.
// - ImplicitLangevinIntegrator: drift-implicit projected Euler–Maruyama with a fixed step η,
//       ω^{n+1} = Π_D( ω^n − η F(ω^{n+1}) + √(2η/β) ζ^n ),
//   the same noise streams as the explicit Langevin integrator; each step is the proximal problem
//   min over D^N of N E_N(y) + |y − ω^n − √(2η/β) ζ^n|²/(2η), solved by the Newton minimiser.
#include <cstdint>

#include "core/domain.hpp"
#include "solvers/drift_jacobian.hpp"
#include "solvers/energy_minimizer.hpp"
#include "solvers/force_field.hpp"
#include "solvers/particle_integrator.hpp"

namespace cpm {

struct ImplicitGradientFlowParameters {
  double absolute_tolerance = 1e-8;
  double relative_tolerance = 1e-6;
  double initial_step = 1e-3;
  // The error of each stage's linear solve, bounded by γh‖r‖ for the residual r, as a fraction of
  // the error tolerance atol + rtol|x| (per coordinate).
  double linear_tolerance = 0.01;
  // > 0: steps of exactly this size (the last one shortened to land on t), no error control.
  double fixed_step = 0.0;
};

class ImplicitGradientFlowIntegrator final : public ParticleIntegrator {
 public:
  ImplicitGradientFlowIntegrator(ForceField& forces, DriftJacobian& jacobian, Domain domain,
                                 ImplicitGradientFlowParameters parameters);

  void advance_to(Particles& particles, double t) override;
  double time() const override { return time_; }
  std::uint64_t steps_taken() const override { return accepted_steps_; }
  // {"implicit_gradient_flow.time", ".step" (the next proposed step), ".accepted_steps"}: the next
  // step depends on the positions and these only, so a restart continues bit for bit.
  IntegratorState save_state() const override;
  void restore_state(const IntegratorState& state) override;

  std::uint64_t rejected_steps() const { return rejected_steps_; }
  std::uint64_t linear_iterations() const { return linear_iterations_; }

 private:
  // One step of size h from x into x_new; returns the weighted error (max norm, ≤ 1 to accept),
  // +inf when a force became non-finite or a linear solve failed.
  double attempt(const Eigen::MatrixXd& x, double h, Eigen::MatrixXd& x_new);
  bool solve(const Eigen::MatrixXd& rhs, Eigen::MatrixXd& u, double shift, double h,
             const Eigen::MatrixXd& scale);

  ForceField& forces_;
  DriftJacobian& jacobian_;
  Domain domain_;
  ImplicitGradientFlowParameters parameters_;
  double time_ = 0.0;
  double h_;
  std::uint64_t accepted_steps_ = 0, rejected_steps_ = 0, linear_iterations_ = 0;
  bool drift_valid_ = false;  // drift_ belongs to the current positions
  Eigen::MatrixXd drift_, drift2_, stage_, u1_, u2_, u3_, rhs_, low_, scale_;
};

struct ImplicitLangevinParameters {
  double step = 1e-3;  // η
  double beta = 1.0;   // +inf: implicit Euler for the gradient flow
  std::uint64_t seed = 1;
  std::uint64_t replica = 0;
  double tolerance = 1e-8;  // the proximal problem's projected-gradient norm
  int max_iterations = 100;
};

class ImplicitLangevinIntegrator final : public ParticleIntegrator {
 public:
  ImplicitLangevinIntegrator(ForceField& forces, DriftJacobian& jacobian, Domain domain,
                             ImplicitLangevinParameters parameters);

  void step(Particles& particles);
  void advance_to(Particles& particles, double t) override;
  double time() const override { return static_cast<double>(steps_) * parameters_.step; }
  std::uint64_t steps_taken() const override { return steps_; }
  // {"implicit_langevin.steps"}, as the explicit integrator.
  IntegratorState save_state() const override;
  void restore_state(const IntegratorState& state) override;

  std::uint64_t newton_iterations() const { return newton_iterations_; }

 private:
  ImplicitLangevinParameters parameters_;
  EnergyMinimizer minimizer_;
  std::uint64_t steps_ = 0, newton_iterations_ = 0;
  Eigen::MatrixXd anchor_, y_;
};

}  // namespace cpm

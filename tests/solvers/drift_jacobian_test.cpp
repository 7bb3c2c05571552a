// The drift's Jacobian J = ∂F/∂x of solvers/drift_jacobian.hpp against central differences of the
// force field, with exact pair Hessians and with differences of the forces, for a quadratic and a
// general potential; with constraints active on a ball's wall the operator is symmetric and has
// no normal components there; the preconditioner makes conjugate gradients solve (J + σ) u = b.
#include "solvers/drift_jacobian.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "solvers/blocked_pair_sum.hpp"
#include "solvers/krylov.hpp"

namespace cpm {
namespace {

// V(x) = Σ_a (x_a⁴/4 + cos x_a): neither zero nor quadratic, so its Hessian comes from differences.
class QuarticPotential final : public ExternalPotential {
 public:
  void evaluate(const Eigen::MatrixXd& x, Eigen::VectorXd& value,
                Eigen::MatrixXd* gradient) const override {
    value = (x.array().pow(4) / 4.0 + x.array().cos()).rowwise().sum();
    if (gradient) *gradient = x.array().cube() - x.array().sin();
  }
  std::string describe() const override { return "quartic"; }
};

Eigen::MatrixXd random_matrix(Eigen::Index n, Eigen::Index d, unsigned seed, double scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  Eigen::MatrixXd m(n, d);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = u(rng);
  return m;
}

TEST(DriftJacobian, ProductsMatchCentralDifferencesOfTheForces) {
  const std::vector<std::shared_ptr<const ExternalPotential>> potentials = {
      std::make_shared<QuadraticPotential>(1.5), std::make_shared<QuarticPotential>()};
  for (const auto& potential : potentials)
    for (const int d : {1, 2, 3})
      for (const bool exact : {true, false}) {
        const InteractionKernel kernel = InteractionKernel::power(0.5);
        ForceField forces(potential, make_blocked_pair_sum(kernel), 0.7);
        DriftJacobian jacobian(forces, Domain::whole_space(d),
                               exact ? make_pair_hessian(kernel) : nullptr);
        const Eigen::Index n = 40;
        const Eigen::MatrixXd x = random_matrix(n, d, 3 + d, 2.0);
        const Eigen::MatrixXd v = random_matrix(n, d, 7 + d, 1.0);
        Eigen::MatrixXd drift, jv;
        forces.compute(x, drift, nullptr);
        jacobian.linearise(x, drift, drift);
        jacobian.apply(v, jv, 0.0);

        const double eps = 1e-6;
        Eigen::MatrixXd plus, minus;
        forces.compute(x + eps * v, plus, nullptr);
        forces.compute(x - eps * v, minus, nullptr);
        const Eigen::MatrixXd fd = (plus - minus) / (2.0 * eps);
        const double scale = fd.cwiseAbs().maxCoeff();
        EXPECT_LT((jv - fd).cwiseAbs().maxCoeff(), (exact ? 1e-6 : 1e-4) * scale)
            << potential->describe() << " d=" << d << (exact ? " exact" : " differences");
      }
}

TEST(DriftJacobian, ConstrainedOperatorIsSymmetricAndTangentialOnTheWall) {
  const int d = 2;
  const InteractionKernel kernel = InteractionKernel::power(1.0);
  ForceField forces(std::make_shared<ZeroPotential>(), make_blocked_pair_sum(kernel), 1.0);
  const Domain ball = Domain::ball(Eigen::Vector2d::Zero(), 1.0);
  DriftJacobian jacobian(forces, ball, make_pair_hessian(kernel));
  // Half of the particles on the wall: the repulsion pushes them outwards.
  Eigen::MatrixXd x = random_matrix(30, d, 5, 0.6);
  for (Eigen::Index k = 0; k < 15; ++k) x.row(k) /= x.row(k).norm();
  Eigen::MatrixXd drift;
  forces.compute(x, drift, nullptr);
  jacobian.linearise(x, drift, drift);
  ASSERT_GT(jacobian.constraints().count(), 5);

  const Eigen::MatrixXd u = random_matrix(30, d, 8, 1.0), v = random_matrix(30, d, 9, 1.0);
  Eigen::MatrixXd au, av;
  jacobian.apply(u, au, 0.3);
  jacobian.apply(v, av, 0.3);
  EXPECT_NEAR(frobenius_dot(u, av), frobenius_dot(v, au), 1e-10 * std::abs(frobenius_dot(u, av)));
  for (Eigen::Index k = 0; k < 30; ++k)
    if (jacobian.constraints().active(k)) {
      EXPECT_NEAR(av.row(k).dot(x.row(k)), 0.0, 1e-10);
    }
}

TEST(DriftJacobian, PreconditionedConjugateGradientsSolveTheShiftedSystem) {
  for (const int d : {1, 2}) {
    const InteractionKernel kernel = InteractionKernel::power(0.5);
    ForceField forces(std::make_shared<QuadraticPotential>(1.0), make_blocked_pair_sum(kernel),
                      1.0);
    DriftJacobian jacobian(forces, Domain::whole_space(d), make_pair_hessian(kernel));
    // Near the equilibrium spacing, where J is positive definite along the chain.
    Eigen::MatrixXd x = random_matrix(50, d, 2, 1.0);
    if (d == 1)
      for (Eigen::Index k = 0; k < 50; ++k) x(k, 0) = -1.2 + 2.4 * k / 49.0;
    Eigen::MatrixXd drift;
    forces.compute(x, drift, nullptr);
    jacobian.linearise(x, drift, drift);
    // In 2D the pair Hessian has negative transverse curvature: the shift keeps the system
    // positive definite, as the implicit steps' 1/(γh) does.
    const double shift = d == 1 ? 10.0 : 200.0;
    const Eigen::MatrixXd b = random_matrix(50, d, 4, 1.0);
    Eigen::MatrixXd u, check;
    const KrylovResult r = conjugate_gradient(
        [&](const Eigen::MatrixXd& v, Eigen::MatrixXd& out) { jacobian.apply(v, out, shift); },
        [&](const Eigen::MatrixXd& v, Eigen::MatrixXd& z) { jacobian.precondition(v, z, shift); },
        b, u, [&](const Eigen::MatrixXd& res) { return res.norm() <= 1e-12 * b.norm(); }, 500);
    ASSERT_TRUE(r.converged) << "d=" << d;
    jacobian.apply(u, check, shift);
    EXPECT_LT((check - b).norm(), 1e-11 * b.norm()) << "d=" << d;
  }
}

}  // namespace
}  // namespace cpm

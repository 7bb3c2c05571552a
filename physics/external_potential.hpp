#pragma once
// External potentials V acting on each particle. The interface is batched over the whole
// ensemble so that data-driven potentials (the alignment potential) can use matrix products.
#include <Eigen/Dense>
#include <memory>
#include <string>

namespace cpm {

class ExternalPotential {
 public:
  virtual ~ExternalPotential() = default;
  // For positions x (N, d): value(k) = V(x_k); if gradient is non-null, row k = ∇V(x_k).
  // Outputs are resized by the callee only when their shape differs.
  virtual void evaluate(const Eigen::MatrixXd& x, Eigen::VectorXd& value,
                        Eigen::MatrixXd* gradient) const = 0;
  virtual std::string describe() const = 0;
};

// V = 0.
class ZeroPotential final : public ExternalPotential {
 public:
  void evaluate(const Eigen::MatrixXd& x, Eigen::VectorXd& value,
                Eigen::MatrixXd* gradient) const override;
  std::string describe() const override { return "zero"; }
};

// V(x) = a |x − c|² / 2.
class QuadraticPotential final : public ExternalPotential {
 public:
  explicit QuadraticPotential(double strength, Eigen::VectorXd centre = {})
      : a_(strength), centre_(std::move(centre)) {}
  double strength() const { return a_; }
  void evaluate(const Eigen::MatrixXd& x, Eigen::VectorXd& value,
                Eigen::MatrixXd* gradient) const override;
  std::string describe() const override;

 private:
  double a_;
  Eigen::VectorXd centre_;  // empty means the origin
};

// Convenience: V and ∇V at a single point.
double potential_value(const ExternalPotential& v, const Eigen::Ref<const Eigen::VectorXd>& point);
Eigen::VectorXd potential_gradient(const ExternalPotential& v,
                                   const Eigen::Ref<const Eigen::VectorXd>& point);

}  // namespace cpm

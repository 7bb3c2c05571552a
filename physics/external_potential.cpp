#include "physics/external_potential.hpp"

#include <sstream>

namespace cpm {

namespace {
void shape_outputs(const Eigen::MatrixXd& x, Eigen::VectorXd& value, Eigen::MatrixXd* gradient) {
  if (value.size() != x.rows()) value.resize(x.rows());
  if (gradient && (gradient->rows() != x.rows() || gradient->cols() != x.cols()))
    gradient->resize(x.rows(), x.cols());
}
}  // namespace

void ZeroPotential::evaluate(const Eigen::MatrixXd& x, Eigen::VectorXd& value,
                             Eigen::MatrixXd* gradient) const {
  shape_outputs(x, value, gradient);
  value.setZero();
  if (gradient) gradient->setZero();
}

void QuadraticPotential::evaluate(const Eigen::MatrixXd& x, Eigen::VectorXd& value,
                                  Eigen::MatrixXd* gradient) const {
  shape_outputs(x, value, gradient);
  value.setZero();
  for (Eigen::Index a = 0; a < x.cols(); ++a) {
    const double c = centre_.size() ? centre_[a] : 0.0;
    value.array() += (x.col(a).array() - c).square();
    if (gradient) gradient->col(a) = a_ * (x.col(a).array() - c);
  }
  value *= 0.5 * a_;
}

std::string QuadraticPotential::describe() const {
  std::ostringstream o;
  o << "quadratic a=" << a_;
  return o.str();
}

double potential_value(const ExternalPotential& v, const Eigen::Ref<const Eigen::VectorXd>& p) {
  Eigen::MatrixXd x = p.transpose();
  Eigen::VectorXd value;
  v.evaluate(x, value, nullptr);
  return value[0];
}

Eigen::VectorXd potential_gradient(const ExternalPotential& v,
                                   const Eigen::Ref<const Eigen::VectorXd>& p) {
  Eigen::MatrixXd x = p.transpose();
  Eigen::VectorXd value;
  Eigen::MatrixXd gradient;
  v.evaluate(x, value, &gradient);
  return gradient.row(0).transpose();
}

}  // namespace cpm

#include "features/compensated_confinement.hpp"

#include <cmath>
#include <sstream>

namespace cpm {

CompensatedConfinement::CompensatedConfinement(RieszPotentialOfGaussian potential, double lambda,
                                               double beta)
    : potential_(std::move(potential)), lambda_(lambda), beta_(beta) {}

CompensatedConfinement::CompensatedConfinement(std::shared_ptr<const TabulatedRieszPotential> table,
                                               double lambda, double beta)
    : potential_(table->exact()), table_(std::move(table)), lambda_(lambda), beta_(beta) {}

void CompensatedConfinement::evaluate(const Eigen::MatrixXd& x, Eigen::VectorXd& value,
                                      Eigen::MatrixXd* gradient) const {
  if (value.size() != x.rows()) value.resize(x.rows());
  if (gradient && (gradient->rows() != x.rows() || gradient->cols() != x.cols()))
    gradient->resize(x.rows(), x.cols());
  const double anchor =
      std::isinf(beta_) ? 0.0 : 1.0 / (beta_ * potential_.sigma() * potential_.sigma());
#pragma omp parallel for schedule(static) if (x.rows() > 256)
  for (Eigen::Index k = 0; k < x.rows(); ++k) {
    const double r2 = x.row(k).squaredNorm();
    const double u = table_ ? table_->value_r2(r2) : potential_.value_r2(r2);
    value[k] = 0.5 * anchor * r2 - lambda_ * u;
    if (!gradient) continue;
    const double q = table_ ? table_->gradient_factor(r2) : potential_.gradient_factor(r2);
    gradient->row(k) = (anchor - lambda_ * q) * x.row(k);
  }
}

std::string CompensatedConfinement::describe() const {
  std::ostringstream o;
  o << "compensated confinement sigma=" << potential_.sigma() << " lambda=" << lambda_
    << " beta=" << beta_;
  return o.str();
}

}  // namespace cpm

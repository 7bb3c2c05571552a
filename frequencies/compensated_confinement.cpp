#include "frequencies/compensated_confinement.hpp"

#include <cmath>
#include <sstream>

namespace cpm {

CompensatedConfinement::CompensatedConfinement(std::shared_ptr<const RadialConvolution> convolution,
                                               double lambda, double beta, SpectralLaw law)
    : convolution_(std::move(convolution)), lambda_(lambda), beta_(beta), law_(law) {}

void CompensatedConfinement::evaluate(const Eigen::MatrixXd& x, Eigen::VectorXd& value,
                                      Eigen::MatrixXd* gradient) const {
  if (value.size() != x.rows()) value.resize(x.rows());
  if (gradient && (gradient->rows() != x.rows() || gradient->cols() != x.cols()))
    gradient->resize(x.rows(), x.cols());
  const bool anchored = !std::isinf(beta_);
  const int d = convolution_->dim();
  const double sigma = convolution_->sigma();
#pragma omp parallel for schedule(static) if (x.rows() > 256)
  for (Eigen::Index k = 0; k < x.rows(); ++k) {
    const double r2 = x.row(k).squaredNorm();
    const double anchor = anchored ? negative_log_density(law_, d, sigma, r2) / beta_ : 0.0;
    value[k] = anchor - lambda_ * convolution_->value_r2(r2);
    if (!gradient) continue;
    const double anchor_factor =
        anchored ? negative_log_density_factor(law_, d, sigma, r2) / beta_ : 0.0;
    gradient->row(k) = (anchor_factor - lambda_ * convolution_->gradient_factor(r2)) * x.row(k);
  }
}

std::string CompensatedConfinement::describe() const {
  std::ostringstream o;
  o << "compensated confinement law=" << spectral_law_name(law_)
    << " sigma=" << convolution_->sigma() << " lambda=" << lambda_ << " beta=" << beta_;
  return o.str();
}

}  // namespace cpm

#include "physics/riesz_kernel.hpp"

#include <sstream>

#include "core/quadrature.hpp"

namespace cpm {

double RieszPower::radial_moment(int d, double rho) const {
  if (s >= d) throw std::invalid_argument("|z|^-s is not locally integrable for s >= d");
  return (s > 0.0 ? 1.0 : -1.0) * std::pow(rho, d - s) / (d - s);
}

double RieszLog::radial_moment(int d, double rho) const {
  return rho > 0.0 ? std::pow(rho, d) * (1.0 / d - std::log(rho)) / d : 0.0;
}

double RieszLinear::radial_moment(int d, double rho) const {
  return -std::pow(rho, d + 1) / (d + 1);
}

double QuadraticPair::radial_moment(int d, double rho) const {
  return kappa * std::pow(rho, d + 2) / (2.0 * (d + 2));
}

double AbsolutePair::radial_moment(int d, double rho) const {
  return kappa * std::pow(rho, d + 1) / (d + 1);
}

double RieszMollified::radial_moment(int d, double rho) const {
  return integrate_adaptive([&](double r) { return value_r2(r * r) * std::pow(r, d - 1); }, 0.0,
                            rho);
}

std::string InteractionKernel::describe() const {
  std::ostringstream o;
  switch (kind) {
    case Kind::power:
      if (s > 0.0)
        o << "riesz |z|^-" << s;
      else
        o << "riesz -|z|^" << -s;
      break;
    case Kind::log:
      o << "log -log|z|";
      break;
    case Kind::linear:
      o << "linear -|z|";
      break;
    case Kind::mollified:
      o << "mollified riesz s=" << s << " eps=" << epsilon;
      break;
    case Kind::quadratic:
      o << "quadratic kappa=" << kappa;
      break;
    case Kind::absolute:
      o << "absolute kappa=" << kappa;
      break;
    case Kind::none:
      o << "none";
      break;
  }
  return o.str();
}

}  // namespace cpm

#include "physics/riesz_kernel.hpp"

#include <sstream>

namespace cpm {

std::string InteractionKernel::describe() const {
  std::ostringstream o;
  switch (kind) {
    case Kind::power:
      o << "riesz |z|^-" << s;
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

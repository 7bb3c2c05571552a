#include "physics/riesz_kernel.hpp"

#include <sstream>

namespace cpm {

std::string InteractionKernel::describe() const {
  std::ostringstream o;
  switch (kind) {
    case Kind::riesz:
      if (s > 0.0)
        o << "riesz |z|^-" << s;
      else if (s == 0.0)
        o << "log -log|z|";
      else
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

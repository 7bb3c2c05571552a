#include "solvers/particle_integrator.hpp"

#include <stdexcept>

namespace cpm {

double state_entry(const IntegratorState& state, const std::string& name) {
  const auto it = state.find(name);
  if (it == state.end()) throw std::invalid_argument("solver state has no entry " + name);
  return it->second;
}

}  // namespace cpm

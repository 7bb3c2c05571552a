#pragma once
// The sections that describe a particle system, read by one function each and shared by every
// command: the domain D, the external potential, the interaction W (with its strength and pair-sum
// method), the initial law and the dynamics (docs/model.md §1). A key has one rule wherever it
// appears: `s` of a Riesz kernel is checked by the same code in `cpm run`, `cpm kernel` and
// `cpm train`.
#include <Eigen/Dense>
#include <limits>
#include <optional>
#include <string>

#include "config/toml_reader.hpp"
#include "core/domain.hpp"
#include "core/enum_names.hpp"
#include "core/initial_law.hpp"
#include "physics/riesz_kernel.hpp"
#include "solvers/energy_minimizer.hpp"

namespace cpm {

enum class PotentialKind { zero, quadratic };
const std::vector<std::string>& names(PotentialKind);  // "zero", "quadratic"

struct PotentialConfig {
  PotentialKind kind = PotentialKind::quadratic;
  double strength = 1.0;  // a in V = a|x|²/2
};

// How the pair sums are computed (solvers/): the plain O(N²) loop, the blocked SIMD loop, or the
// particle-mesh method.
enum class PairSumMethod { reference, direct, mesh };
const std::vector<std::string>& names(PairSumMethod);  // "reference", "direct", "mesh"

struct InteractionConfig {
  InteractionKernel kernel = InteractionKernel::power(0.5);
  double lambda = 1.0;
  PairSumMethod method = PairSumMethod::direct;
  // mesh: pairs up to this many cells apart are summed exactly (solvers/particle_mesh_sum.hpp);
  // −1 is the plain mesh, which smooths close pairs over a cell. Absent: default_near_cells(d).
  std::optional<int> mesh_near_cells = std::nullopt;
};

// How time is counted: runs and studies go to t_end with output times; learning runs a number
// of steps of size η (one mini-batch each).
enum class DynamicsClock { time, steps };

// The integrators by name (docs/numerics.md §3.4, §3.9, §3.10): langevin (explicit
// Euler–Maruyama), gradient_flow (Dormand–Prince, β = ∞), implicit_gradient_flow (ROS3P with
// Krylov solves, β = ∞), implicit_langevin (drift-implicit Euler–Maruyama) and minimize (the β = ∞
// equilibrium by energy minimisation).
enum class Integrator {
  langevin,
  gradient_flow,
  implicit_gradient_flow,
  implicit_langevin,
  minimize
};
const std::vector<std::string>& names(Integrator);

struct DynamicsConfig {
  double beta = std::numeric_limits<double>::infinity();
  Integrator integrator = Integrator::langevin;
  double step = 1e-3;                // Langevin η; first step of the flows; FIRE's first time step
  double t_end = 1.0;                // clock time
  int outputs = 10;                  // clock time: output times after t = 0, equally spaced
  int steps = 0;                     // clock steps: the number of steps
  double absolute_tolerance = 1e-8;  // gradient_flow, implicit_gradient_flow
  double relative_tolerance = 1e-6;
  MinimizerMethod minimizer = MinimizerMethod::newton;  // minimize (cpm run: newton in 1D, lbfgs
                                                        // otherwise)
  double tolerance = 1e-8;     // minimize, implicit_langevin: projected-gradient norm
  int max_iterations = 10000;  // minimize
};

// Whether the integrator needs β = ∞ (the noiseless flows and the minimiser).
bool noiseless_integrator(Integrator integrator);

// Each reader consumes its table (finish() rejects keys it did not read). A caller with keys
// of its own in the same table reads them first from the reader it then passes on.
Domain read_domain(TomlReader t);
PotentialConfig read_potential(TomlReader t);
// `defaults` gives the kernel (with its parameters), λ and method when their keys are absent;
// without them the kernel is "riesz" and its parameters are required. The dimension, when
// known, bounds s (check_interaction_dimension applies the same rule once the data fix d).
InteractionConfig read_interaction(TomlReader t, std::optional<int> dim,
                                   const std::optional<InteractionConfig>& defaults = {});
InitialLaw read_initial(TomlReader t, int dim);
DynamicsConfig read_dynamics(TomlReader t, DynamicsClock clock, const DynamicsConfig& defaults);
// [output] `directory`, every command's: a folder name, not empty (`fallback` when absent).
std::string read_output_directory(TomlReader t, const std::string& fallback);

// The rules on the kernel that depend on d (Riesz and mollified: s < d; linear: d = 1), for
// commands that learn d from their data. Throws InputError "<source>: <section>.<key>: …".
void check_interaction_dimension(const InteractionConfig& interaction, int dim,
                                 const std::string& source, const std::string& section);

}  // namespace cpm

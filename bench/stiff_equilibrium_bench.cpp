// The crowded Riesz gas: W = |z|^{-1/2} (s = 0.5), λ = 1, no external field, projected onto the
// unit ball, from the uniform law on the ball of radius 1/2 (seed 1). At equilibrium the particles
// pile up at the wall, with spacings there of order N^{-4/3} in 1D, which makes explicit steps
// stable only below ~N^{-7/3}. Each case builds its system through the model builder, as `cpm run`
// does, and prints wall time and work:
//
//   minimize_1d_1000           Newton minimiser to r < 1e-8 (docs/numerics.md §3.10)
//   fire_1d_1000               FIRE, the same target, stopped after 60 s
//   explicit_flow_1d_1000      Dormand–Prince gradient flow for 60 s: the model time and r reached
//   implicit_flow_1d_1000      ROS3P gradient flow to t = 3 (default tolerances; §3.9)
//   minimize_1d_10000          Newton to r < 1e-8
//   minimize_2d_10000          projected L-BFGS on the unit disc to r < 1e-8, stopped after 600 s
//                              (target: 180 s)
//   newton_2d_2000             Newton on the disc at N = 2,000, the same target
//   lbfgs_2d_2000              L-BFGS, the same (the ratio against Newton closes the output)
//   fire_2d_10000              FIRE on the unit disc, stopped after 180 s
//   products_2d_10000          one pair-Hessian product against one force evaluation, same points
//   implicit_langevin_1d_1000  drift-implicit Euler–Maruyama, β = 1e7, η = 2e-4, to t = 0.2
//   explicit_langevin_1d_1000  explicit Euler–Maruyama, the same
//
// With every case (no argument) the ratios against the explicit baselines of the same run close
// the output. The machine's load average is printed first and last: on a shared machine the wall
// times scale with it.
//
// Usage: stiff_equilibrium_bench [case …]   (no case: all of them)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/instruction_set.hpp"
#include "core/initial_law.hpp"
#include "experiments/model_builder.hpp"
#include "solvers/implicit_integrators.hpp"
#include "solvers/pair_hessian.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void print_load(const char* when) {
  std::string load;
  std::getline(std::ifstream("/proc/loadavg"), load);
  std::printf("load average (%s): %s\n", when, load.c_str());
}

struct Budget {};  // thrown by an observer to stop a run that exceeds its time
constexpr double kNoBudget = std::numeric_limits<double>::infinity();

// What the ratios need: wall time, and the model time or gradient norm reached.
struct Outcome {
  double seconds = 0.0;
  double model_time = 0.0;
  double gradient_norm = 0.0;
  bool finished = false;
};
std::map<std::string, Outcome> outcomes;

cpm::ParticleSystemSpec crowded_gas(int dim, Eigen::Index n, const std::string& integrator) {
  cpm::ParticleSystemSpec spec;
  spec.domain = cpm::Domain::ball(Eigen::VectorXd::Zero(dim), 1.0);
  spec.potential = std::make_shared<cpm::ZeroPotential>();
  spec.interaction.kernel = cpm::InteractionKernel::power(0.5);
  spec.interaction.lambda = 1.0;
  spec.interaction.method = cpm::PairSumMethod::direct;
  spec.dynamics.beta = std::numeric_limits<double>::infinity();
  spec.dynamics.integrator = cpm::enum_from_name<cpm::Integrator>(integrator);
  spec.n = n;
  spec.seed = 1;
  spec.source = "bench";
  return spec;
}

cpm::Particles initial_particles(int dim, Eigen::Index n) {
  cpm::InitialLaw law;
  law.kind = cpm::InitialLaw::Kind::uniform_ball;
  law.centre = Eigen::VectorXd::Zero(dim);
  law.scale = 0.5;
  return cpm::sample_particles(law, n, 1, 0);
}

double projected_gradient_norm(cpm::ParticleSystem& system, const cpm::Domain& domain,
                               const Eigen::MatrixXd& x) {
  Eigen::MatrixXd drift;
  system.forces->compute(x, drift, nullptr);
  Eigen::MatrixXd y = x - drift;
  domain.project_all(y);
  return std::sqrt((x - y).squaredNorm() / static_cast<double>(x.rows()));
}

void minimize(const std::string& name, int dim, Eigen::Index n, const std::string& method,
              double budget) {
  cpm::ParticleSystemSpec spec = crowded_gas(dim, n, "minimize");
  spec.dynamics.minimizer = cpm::enum_from_name<cpm::MinimizerMethod>(method);
  spec.dynamics.max_iterations = 100000000;
  cpm::ParticleSystem system = cpm::build_particle_system(spec, 0);
  cpm::Particles p = initial_particles(dim, n);
  const auto start = Clock::now();
  cpm::MinimizerProgress last;
  cpm::MinimizationResult r;
  bool stopped = false;
  try {
    r = system.minimizer->minimize(p.positions, [&](const cpm::MinimizerProgress& progress) {
      last = progress;
      if (seconds_since(start) > budget) throw Budget{};
    });
  } catch (const Budget&) {
    stopped = true;
  }
  const double t = seconds_since(start);
  outcomes[name] = {t, 0.0, stopped ? last.gradient_norm : r.gradient_norm,
                    !stopped && r.converged};
  if (stopped)
    std::printf(
        "%-26s d=%d N=%-6ld %-6s stopped after %.1f s: %d iterations, r = %.3e, E = %.15f, %lu "
        "force evaluations\n",
        name.c_str(), dim, static_cast<long>(n), method.c_str(), t, last.iteration,
        last.gradient_norm, last.energy, static_cast<unsigned long>(last.force_evaluations));
  else
    std::printf(
        "%-26s d=%d N=%-6ld %-6s %s in %.2f s: %d iterations, r = %.3e, E = %.15f, %lu force "
        "evaluations, %lu Hessian products, %ld particles on the wall (%s)\n",
        name.c_str(), dim, static_cast<long>(n), method.c_str(),
        r.converged ? "converged" : "stopped", t, r.iterations, r.gradient_norm, r.energy,
        static_cast<unsigned long>(r.force_evaluations),
        static_cast<unsigned long>(r.hessian_products),
        static_cast<long>(system.jacobian ? system.jacobian->constraints().count() : -1),
        r.stop_reason.c_str());
}

// The flow to t_end, or as far as it gets in `budget` seconds (advanced in pieces of model time
// so that the positions reached are at hand when the budget runs out; budget = inf: one piece).
void flow(const std::string& name, const std::string& integrator, Eigen::Index n, double t_end,
          double budget) {
  cpm::ParticleSystemSpec spec = crowded_gas(1, n, integrator);
  cpm::ParticleSystem system = cpm::build_particle_system(spec, 0);
  cpm::Particles p = initial_particles(1, n);
  const auto start = Clock::now();
  cpm::IntegratorProgress last;
  system.integrator->set_observer(
      [&](const cpm::IntegratorProgress& progress) { last = progress; });
  double reached = 0.0;
  const double piece = 1e-3;
  while (reached < t_end && seconds_since(start) < budget) {
    reached = std::isfinite(budget)
                  ? std::min(t_end, reached + piece * std::max(1.0, std::floor(reached / 0.01)))
                  : t_end;
    system.integrator->advance_to(p, reached);
  }
  const double t = seconds_since(start);
  const double r = projected_gradient_norm(system, spec.domain, p.positions);
  outcomes[name] = {t, reached, r, reached >= t_end};
  std::printf(
      "%-26s N=%-6ld %s t = %.4g in %.2f s (%.3g s per unit time): %lu steps, last step "
      "%.3e, r = %.3e",
      name.c_str(), static_cast<long>(n), reached >= t_end ? "reached" : "stopped at", reached, t,
      t / reached, static_cast<unsigned long>(system.integrator->steps_taken()), last.step, r);
  if (const auto* implicit =
          dynamic_cast<const cpm::ImplicitGradientFlowIntegrator*>(system.integrator.get()))
    std::printf(", %lu rejected, %lu CG iterations",
                static_cast<unsigned long>(implicit->rejected_steps()),
                static_cast<unsigned long>(implicit->linear_iterations()));
  std::printf("\n");
}

// The cost of the Newton iterations' unit of work: a pair-Hessian product (solvers/pair_hessian)
// against a force evaluation, best of `repeats` each, at the starting points of minimize_2d_10000.
void products(const std::string& name, int dim, Eigen::Index n, int repeats) {
  cpm::ParticleSystemSpec spec = crowded_gas(dim, n, "minimize");
  cpm::ParticleSystem system = cpm::build_particle_system(spec, 0);
  const cpm::Particles p = initial_particles(dim, n);
  auto hessian = cpm::make_pair_hessian(spec.interaction.kernel);
  const Eigen::MatrixXd v = Eigen::MatrixXd::Ones(n, dim) + p.positions;
  Eigen::MatrixXd drift, out;
  const auto best_of = [&](const std::function<void()>& work) {
    double best = kNoBudget;
    for (int k = 0; k < repeats; ++k) {
      const auto start = Clock::now();
      work();
      best = std::min(best, seconds_since(start));
    }
    return best;
  };
  const double force = best_of([&] { system.forces->compute(p.positions, drift, nullptr); });
  const double product = best_of([&] { hessian->apply(p.positions, v, out); });
  const double pairs = 0.5 * static_cast<double>(n) * static_cast<double>(n - 1);
  std::printf(
      "%-26s d=%d N=%-6ld force evaluation %.4f s, Hessian product %.4f s (%.3g pairs/s), "
      "ratio product/force %.3f\n",
      name.c_str(), dim, static_cast<long>(n), force, product, pairs / product, product / force);
}

void langevin(const std::string& name, const std::string& integrator, Eigen::Index n,
              double t_end) {
  cpm::ParticleSystemSpec spec = crowded_gas(1, n, integrator);
  spec.dynamics.beta = 1e7;
  spec.dynamics.step = 2e-4;
  cpm::ParticleSystem system = cpm::build_particle_system(spec, 0);
  cpm::Particles p = initial_particles(1, n);
  const auto start = Clock::now();
  std::string outcome = "finite";
  try {
    system.integrator->advance_to(p, t_end);
    if (!p.positions.allFinite()) outcome = "NON-FINITE positions";
  } catch (const std::exception& e) {
    outcome = std::string("failed: ") + e.what();
  }
  const double t = seconds_since(start);
  std::printf("%-26s N=%-6ld beta=1e7 eta=2e-4 to t = %.3g: %.2f s, %s", name.c_str(),
              static_cast<long>(n), t_end, t, outcome.c_str());
  if (const auto* implicit =
          dynamic_cast<const cpm::ImplicitLangevinIntegrator*>(system.integrator.get()))
    std::printf(", %lu Newton iterations, %lu Hessian products",
                static_cast<unsigned long>(implicit->newton_iterations()),
                static_cast<unsigned long>(system.jacobian->products()));
  if (p.positions.allFinite()) std::printf(", extent %.6f", p.positions.cwiseAbs().maxCoeff());
  std::printf("\n");
}

void print_ratios() {
  const auto has = [](const char* name) { return outcomes.count(name) > 0; };
  if (has("implicit_flow_1d_1000") && has("explicit_flow_1d_1000")) {
    const Outcome& i = outcomes["implicit_flow_1d_1000"];
    const Outcome& e = outcomes["explicit_flow_1d_1000"];
    std::printf(
        "ratio: implicit flow advances %.3g times the model time per wall second of the explicit "
        "flow (%.3g vs %.3g)\n",
        (i.model_time / i.seconds) / (e.model_time / e.seconds), i.model_time / i.seconds,
        e.model_time / e.seconds);
  }
  if (has("minimize_1d_1000") && has("explicit_flow_1d_1000")) {
    const Outcome& m = outcomes["minimize_1d_1000"];
    const Outcome& e = outcomes["explicit_flow_1d_1000"];
    std::printf(
        "ratio: Newton reaches r = %.2e in %.3g s; the explicit flow has r = %.2e after %.3g s "
        "(%.3g times the wall time)\n",
        m.gradient_norm, m.seconds, e.gradient_norm, e.seconds, e.seconds / m.seconds);
  }
  if (has("minimize_1d_1000") && has("fire_1d_1000")) {
    const Outcome& m = outcomes["minimize_1d_1000"];
    const Outcome& f = outcomes["fire_1d_1000"];
    std::printf("ratio: FIRE %s r = %.2e in %.3g s (%.3g times Newton's wall time)\n",
                f.finished ? "reaches" : "is at", f.gradient_norm, f.seconds,
                f.seconds / m.seconds);
  }
  if (has("newton_2d_2000") && has("lbfgs_2d_2000")) {
    const Outcome& n = outcomes["newton_2d_2000"];
    const Outcome& l = outcomes["lbfgs_2d_2000"];
    std::printf(
        "ratio: on the disc at N = 2,000 L-BFGS reaches r = %.2e in %.3g s, Newton r = %.2e in "
        "%.3g s (%.3g times L-BFGS's wall time)\n",
        l.gradient_norm, l.seconds, n.gradient_norm, n.seconds, n.seconds / l.seconds);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, std::function<void(const std::string&)>> cases = {
      {"minimize_1d_1000", [](const std::string& c) { minimize(c, 1, 1000, "newton", kNoBudget); }},
      {"fire_1d_1000", [](const std::string& c) { minimize(c, 1, 1000, "fire", 60.0); }},
      {"explicit_flow_1d_1000",
       [](const std::string& c) { flow(c, "gradient_flow", 1000, 3.0, 60.0); }},
      {"implicit_flow_1d_1000",
       [](const std::string& c) { flow(c, "implicit_gradient_flow", 1000, 3.0, kNoBudget); }},
      {"minimize_1d_10000",
       [](const std::string& c) { minimize(c, 1, 10000, "newton", kNoBudget); }},
      {"minimize_2d_10000", [](const std::string& c) { minimize(c, 2, 10000, "lbfgs", 600.0); }},
      {"newton_2d_2000", [](const std::string& c) { minimize(c, 2, 2000, "newton", kNoBudget); }},
      {"lbfgs_2d_2000", [](const std::string& c) { minimize(c, 2, 2000, "lbfgs", kNoBudget); }},
      {"fire_2d_10000", [](const std::string& c) { minimize(c, 2, 10000, "fire", 180.0); }},
      {"products_2d_10000", [](const std::string& c) { products(c, 2, 10000, 10); }},
      {"implicit_langevin_1d_1000",
       [](const std::string& c) { langevin(c, "implicit_langevin", 1000, 0.2); }},
      {"explicit_langevin_1d_1000",
       [](const std::string& c) { langevin(c, "langevin", 1000, 0.2); }},
  };
  const std::vector<std::string> order = {"minimize_1d_1000",
                                          "fire_1d_1000",
                                          "explicit_flow_1d_1000",
                                          "implicit_flow_1d_1000",
                                          "minimize_1d_10000",
                                          "newton_2d_2000",
                                          "lbfgs_2d_2000",
                                          "minimize_2d_10000",
                                          "fire_2d_10000",
                                          "products_2d_10000",
                                          "implicit_langevin_1d_1000",
                                          "explicit_langevin_1d_1000"};
  std::vector<std::string> chosen(argv + 1, argv + argc);
  if (chosen.empty()) chosen = order;
  cpm::print_instruction_set();
  print_load("start");
  for (const std::string& name : chosen) {
    const auto it = cases.find(name);
    if (it == cases.end()) {
      std::fprintf(stderr, "unknown case %s\n", name.c_str());
      return 2;
    }
    it->second(name);
    std::fflush(stdout);
  }
  print_ratios();
  print_load("end");
  return 0;
}

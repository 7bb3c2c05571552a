// The strict-input contract of the shared model sections: every reader rejects an unknown key, a
// wrong type and an impossible value with one line "<file>: <section>.<key>: <reason>", and a key
// has one rule wherever it appears (`cpm run`, `cpm kernel`, `cpm train`).
#include "config/model_sections.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "config/kernel_config.hpp"
#include "config/run_config.hpp"
#include "config/train_config.hpp"
#include "io/input_error.hpp"

namespace cpm {
namespace {

// The message of the InputError `read` throws on the table [section] of `body`, or "".
std::string error_reading(const std::string& section, const std::string& body,
                          const std::function<void(TomlReader)>& read) {
  TomlReader root = TomlReader::parse("[" + section + "]\n" + body, "f.toml");
  try {
    read(root.table(section));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

struct Case {
  std::string body;      // the section's keys
  std::string expected;  // the start of the message after "f.toml: <section>."
};

void expect_errors(const std::string& section, const std::function<void(TomlReader)>& read,
                   const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const std::string message = error_reading(section, c.body, read);
    EXPECT_EQ(message.rfind("f.toml: " + section + "." + c.expected, 0), 0u)
        << "[" << section << "] " << c.body << " gave: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(ModelSections, DomainRejectsUnknownKeysWrongTypesAndImpossibleValues) {
  expect_errors(
      "domain", [](TomlReader t) { read_domain(t); },
      {{"kind = \"ball\"\ncentre = [0.0]\nradius = 1.0\ncolour = 1\n", "colour: unknown key"},
       {"kind = \"sphere\"\n", "kind: unknown value 'sphere'"},
       {"kind = \"ball\"\ncentre = [0.0]\nradius = \"big\"\n", "radius: expected a number"},
       {"kind = \"ball\"\ncentre = [0.0]\nradius = -1.0\n", "radius: must be positive"},
       {"kind = \"box\"\nlower = [0.0]\nupper = [0.0]\n", "upper: must exceed lower"},
       {"kind = \"whole_space\"\ndim = 0\n", "dim: must be at least 1"}});
}

TEST(ModelSections, PotentialRejectsUnknownKeysWrongTypesAndImpossibleValues) {
  expect_errors("potential", [](TomlReader t) { read_potential(t); },
                {{"kind = \"quadratic\"\nstrenght = 1.0\n", "strenght: unknown key"},
                 {"kind = \"quartic\"\n", "kind: unknown value 'quartic'"},
                 {"strength = [1.0]\n", "strength: expected a number"}});
}

TEST(ModelSections, InteractionRejectsUnknownKeysWrongTypesAndImpossibleValues) {
  auto read = [](TomlReader t) { read_interaction(t, 2); };
  expect_errors(
      "interaction", read,
      {{"kernel = \"log\"\nalpha = 1.0\n", "alpha: unknown key"},
       {"kernel = \"yukawa\"\n", "kernel: unknown value 'yukawa'"},
       {"kernel = \"riesz\"\n", "s: missing"},
       {"kernel = \"riesz\"\ns = \"one\"\n", "s: expected a number"},
       {"kernel = \"riesz\"\ns = 0.0\n", "s: must satisfy -2 < s < d = 2, s != 0"},
       {"kernel = \"riesz\"\ns = 2.0\n", "s: must satisfy -2 < s < d = 2"},
       {"kernel = \"riesz\"\ns = -2.0\n", "s: must satisfy -2 < s < d = 2"},
       {"kernel = \"mollified\"\ns = 1.0\nepsilon = 0.0\n", "epsilon: must be positive"},
       {"kernel = \"mollified\"\ns = 2.5\nepsilon = 0.1\n", "s: must satisfy 0 <= s < d = 2"},
       {"kernel = \"linear\"\n", "kernel: the linear kernel -|z| is defined for d = 1"},
       {"kernel = \"log\"\nlambda = -1.0\n", "lambda: must be >= 0"},
       {"kernel = \"log\"\nmethod = \"fmm\"\n", "method: unknown value 'fmm'"},
       {"kernel = \"log\"\nmesh_near_cells = 1\n", "mesh_near_cells: applies to method"},
       {"kernel = \"log\"\nmethod = \"mesh\"\nmesh_near_cells = 4\n",
        "mesh_near_cells: must lie in -1"}});
}

TEST(ModelSections, InitialLawRejectsUnknownKeysWrongTypesAndImpossibleValues) {
  expect_errors("initial", [](TomlReader t) { read_initial(t, 2); },
                {{"law = \"gaussian\"\nmean = [0.0, 0.0]\n", "mean: unknown key"},
                 {"law = \"gaussian\"\ncentre = [0.0]\n", "centre: must have d = 2 coordinates"},
                 {"law = \"gaussian\"\nstd = 0.0\n", "std: must be positive"},
                 {"law = \"cauchy\"\n", "law: unknown value 'cauchy'"}});
}

TEST(ModelSections, DynamicsRejectsUnknownKeysWrongTypesAndImpossibleValues) {
  auto in_time = [](TomlReader t) { read_dynamics(t, DynamicsClock::time, DynamicsConfig{}); };
  expect_errors(
      "dynamics", in_time,
      {{"stepsize = 0.1\n", "stepsize: unknown key"},
       {"steps = 10\n", "steps: unknown key"},
       {"beta = 0.0\n", "beta: must be positive"},
       {"beta = \"hot\"\n", "beta: expected a number"},
       {"beta = 1.0\nintegrator = \"gradient_flow\"\n", "integrator: gradient_flow"},
       {"beta = 1.0\nintegrator = \"implicit_gradient_flow\"\n",
        "integrator: implicit_gradient_flow is the noiseless flow"},
       {"beta = 1.0\nintegrator = \"minimize\"\n", "integrator: minimize finds"},
       {"integrator = \"euler\"\n", "integrator: unknown value 'euler'"},
       {"minimizer = \"fire\"\n", "minimizer: applies to integrator = \"minimize\""},
       {"integrator = \"minimize\"\nminimizer = \"bfgs\"\n", "minimizer: unknown value 'bfgs'"},
       {"integrator = \"gradient_flow\"\ntolerance = 1e-6\n", "tolerance: applies to integrator"},
       {"integrator = \"minimize\"\ntolerance = 0.0\n", "tolerance: must be positive"},
       {"integrator = \"minimize\"\nmax_iterations = 0\n", "max_iterations: must lie in 1"},
       {"step = -1.0\n", "step: must be positive"},
       {"t_end = 0.0\n", "t_end: must be positive"},
       {"outputs = 0\n", "outputs: must be at least 1"},
       {"outputs = 1.5\n", "outputs: expected an integer"}});
  auto in_steps = [](TomlReader t) { read_dynamics(t, DynamicsClock::steps, DynamicsConfig{}); };
  expect_errors("dynamics", in_steps,
                {{"t_end = 1.0\n", "t_end: unknown key"}, {"steps = -1\n", "steps: must be >= 0"}});
}

TEST(ModelSections, DefaultsOfTheCommandFillAbsentKeys) {
  TomlReader root = TomlReader::parse("[r]\nlambda = 0.5\n", "f.toml");
  const InteractionConfig c = read_interaction(
      root.table("r"), 3, InteractionConfig{.kernel = InteractionKernel::mollified(1.5, 0.2)});
  EXPECT_EQ(c.kernel.kind, InteractionKernel::Kind::mollified);
  EXPECT_EQ(c.kernel.s, 1.5);
  EXPECT_EQ(c.kernel.epsilon, 0.2);
  EXPECT_EQ(c.lambda, 0.5);
}

// The reason in "<file>: <key>: <reason>".
std::string reason(const std::string& message) {
  return message.substr(message.find(": ", message.find(": ") + 2) + 2);
}

template <class Parse>
std::string error_of(Parse parse) {
  try {
    parse();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelSections, RieszExponentHasOneRuleInEveryCommand) {
  const std::string run = error_of([] {
    parse_run_config(
        "[particles]\nn = 10\n[domain]\nkind = \"whole_space\"\ndim = 2\n"
        "[interaction]\nkernel = \"riesz\"\ns = 3.0\n",
        "run.toml");
  });
  const std::string kernel = error_of([] {
    parse_kernel_config("[data]\ndim = 2\n[repulsion]\nkernel = \"riesz\"\ns = 3.0\n", "k.toml");
  });
  const std::string train = error_of([] {
    parse_train_config(
        "[model]\nd_model = 4\nheads = 2\n[phase_a.interaction]\nkernel = \"riesz\"\ns = 3.0\n",
        "t.toml");
  });
  EXPECT_EQ(run.rfind("run.toml: interaction.s: ", 0), 0u) << run;
  EXPECT_EQ(kernel.rfind("k.toml: repulsion.s: ", 0), 0u) << kernel;
  EXPECT_EQ(train.rfind("t.toml: phase_a.interaction.s: ", 0), 0u) << train;
  EXPECT_EQ(reason(run), reason(kernel));
  EXPECT_EQ(reason(run), reason(train));
  // Where d comes from the data, the same rule applies once d is known.
  InteractionConfig c;
  c.kernel = InteractionKernel::power(3.0);
  const std::string late =
      error_of([&] { check_interaction_dimension(c, 2, "k.toml", "repulsion"); });
  EXPECT_EQ(late, kernel);
}

TEST(ModelSections, MinimiserGivesNoTrajectoryForTheGridOrAStudy) {
  const std::string model =
      "[particles]\nn = 10\n[domain]\nkind = \"ball\"\ncentre = [0.0]\nradius = 1.0\n"
      "[interaction]\nkernel = \"riesz\"\ns = 0.5\n[dynamics]\nintegrator = \"minimize\"\n";
  EXPECT_NO_THROW(parse_run_config(model, "run.toml"));
  const std::string grid =
      error_of([&] { parse_run_config(model + "[grid]\ncells = [32]\n", "run.toml"); });
  EXPECT_EQ(grid.rfind("run.toml: dynamics.integrator: minimize gives one equilibrium", 0), 0u)
      << grid;
}

TEST(ModelSections, OneNumberOfCellsServesEveryAxis) {
  const std::string model =
      "[particles]\nn = 10\n[domain]\nkind = \"box\"\nlower = [0.0, 0.0]\nupper = [1.0, 1.0]\n"
      "[interaction]\nkernel = \"log\"\n";
  const RunConfig scalar = parse_run_config(model + "[grid]\ncells = 48\n", "run.toml");
  EXPECT_EQ(scalar.grid->cells, Eigen::Vector2i(48, 48));
  const RunConfig listed = parse_run_config(model + "[grid]\ncells = [48, 32]\n", "run.toml");
  EXPECT_EQ(listed.grid->cells, Eigen::Vector2i(48, 32));
  const std::string text =
      error_of([&] { parse_run_config(model + "[grid]\ncells = \"many\"\n", "run.toml"); });
  EXPECT_EQ(text, "run.toml: grid.cells: expected a number or an array of numbers");
}

TEST(ModelSections, TheMinimiserDefaultsToNewtonIn1DAndLbfgsOtherwise) {
  const std::string tail =
      "[interaction]\nkernel = \"riesz\"\ns = 0.5\n[dynamics]\nintegrator = \"minimize\"\n";
  const RunConfig line = parse_run_config(
      "[particles]\nn = 10\n[domain]\nkind = \"ball\"\ncentre = [0.0]\nradius = 1.0\n" + tail,
      "run.toml");
  EXPECT_EQ(line.dynamics.minimizer, MinimizerMethod::newton);
  const RunConfig disc = parse_run_config(
      "[particles]\nn = 10\n[domain]\nkind = \"ball\"\ncentre = [0.0, 0.0]\nradius = 1.0\n" + tail,
      "run.toml");
  EXPECT_EQ(disc.dynamics.minimizer, MinimizerMethod::lbfgs);
  const RunConfig chosen = parse_run_config(
      "[particles]\nn = 10\n[domain]\nkind = \"ball\"\ncentre = [0.0, 0.0]\nradius = 1.0\n" + tail +
          "minimizer = \"newton\"\n",
      "run.toml");
  EXPECT_EQ(chosen.dynamics.minimizer, MinimizerMethod::newton);
}

}  // namespace
}  // namespace cpm

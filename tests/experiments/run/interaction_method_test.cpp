#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "experiments/model_builder.hpp"
#include "experiments/run/particle_run.hpp"
#include "io/h5md_reader.hpp"
#include "io/input_error.hpp"
#include "solvers/particle_mesh_sum.hpp"
#include "tests/command_runner.hpp"

namespace cpm {
namespace {

std::string config_text(const std::string& domain, const std::string& method,
                        const std::string& directory) {
  return "[particles]\nn = 50\n[domain]\n" + domain +
         "\n[potential]\nkind = \"quadratic\"\n"
         "[interaction]\nkernel = \"log\"\nmethod = \"" +
         method +
         "\"\n[initial]\nlaw = \"gaussian\"\nstd = 0.3\n"
         "[dynamics]\nintegrator = \"gradient_flow\"\nt_end = 0.01\noutputs = 1\n"
         "[output]\ndirectory = \"" +
         directory + "\"\n";
}

const std::string kBall2D = "kind = \"ball\"\ncentre = [0.0, 0.0]\nradius = 2.0";

TEST(InteractionMethod, ConfigSwitchChoosesTheSumAndTheRunRecordsIt) {
  for (const std::string method : {"reference", "direct", "mesh"}) {
    const auto dir = testing::fresh_directory("interaction_method_" + method);
    const RunConfig config = parse_run_config(config_text(kBall2D, method, dir.string()), "test");
    EXPECT_EQ(
        make_interaction_sum(config.interaction, config.domain, config.n, config.source)->name(),
        method);
    run_particles(config, CommandOptions{.overwrite = true, .progress = false, .restart = ""});
    std::ifstream info(dir / "run_info.txt");
    std::stringstream text;
    text << info.rdbuf();
    EXPECT_NE(text.str().find("interaction_method = " + method), std::string::npos) << text.str();
  }
}

TEST(InteractionMethod, MeshNeedsABoundedDomain) {
  const RunConfig config =
      parse_run_config(config_text("kind = \"whole_space\"\ndim = 2", "mesh", "unused"), "test");
  EXPECT_THROW(make_interaction_sum(config.interaction, config.domain, config.n, config.source),
               InputError);
}

TEST(InteractionMethod, MeshNearRangeDefaultsPerDimensionAndIsRecorded) {
  const auto dir = testing::fresh_directory("interaction_method_near");
  RunConfig config = parse_run_config(config_text(kBall2D, "mesh", dir.string()), "test");
  EXPECT_EQ(mesh_near_cells(config.interaction, 2), default_near_cells(2));
  config.interaction.mesh_near_cells = -1;
  EXPECT_EQ(mesh_near_cells(config.interaction, 2), -1);
  run_particles(config, CommandOptions{.overwrite = true, .progress = false, .restart = ""});
  // The run read is kept: find() points into it (found by AddressSanitizer, `make sanitize`).
  const H5mdRun run = read_h5md((dir / "run.h5").string());
  const ParameterSet::Value* recorded = run.parameters.find("interaction.mesh_near_cells");
  ASSERT_NE(recorded, nullptr);
  EXPECT_EQ(std::get<std::int64_t>(*recorded), -1);
}

TEST(InteractionMethod, MeshNearRangeOutsideItsRangeOrWithoutTheMeshIsRefused) {
  const std::string mesh = config_text(kBall2D, "mesh", "unused");
  const std::string at = "method = \"mesh\"\n";
  for (const std::string bad : {"mesh_near_cells = 4\n", "mesh_near_cells = -2\n"}) {
    std::string text = mesh;
    text.insert(text.find(at) + at.size(), bad);
    EXPECT_THROW(parse_run_config(text, "test"), InputError) << bad;
  }
  std::string direct = config_text(kBall2D, "direct", "unused");
  const std::string at_direct = "method = \"direct\"\n";
  direct.insert(direct.find(at_direct) + at_direct.size(), "mesh_near_cells = 1\n");
  EXPECT_THROW(parse_run_config(direct, "test"), InputError);
}

}  // namespace
}  // namespace cpm

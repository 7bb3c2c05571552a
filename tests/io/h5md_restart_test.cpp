// A checkpoint holds all a Langevin run needs to continue bit for bit: T steps in one go equal
// T/2 steps, a checkpoint written and read back, and T/2 more steps from what was read.
#include <gtest/gtest.h>

#include "core/initial_law.hpp"
#include "experiments/model_builder.hpp"
#include "io/h5md_reader.hpp"
#include "io/h5md_writer.hpp"
#include "solvers/langevin.hpp"
#include "tests/scratch_directory.hpp"

namespace cpm {
namespace {

RunConfig noisy_gas() {
  RunConfig c;
  c.n = 64;
  c.seed = 2024;
  c.domain = Domain::ball(Eigen::VectorXd::Zero(2), 1.5);
  c.potential = {"quadratic", 1.0};
  c.interaction.kernel = InteractionKernel::mollified(1.0, 0.1);
  c.initial.kind = InitialLaw::Kind::gaussian;
  c.initial.centre = (Eigen::VectorXd(2) << 0.2, -0.1).finished();
  c.initial.scale = 0.5;
  return c;
}

LangevinParameters langevin(const RunConfig& c) {
  return {1e-3, 5.0, c.seed, 0};
}

TEST(H5mdRestart, LangevinContinuedFromACheckpointIsBitIdentical) {
  const RunConfig config = noisy_gas();
  const std::uint64_t total = 40, half = total / 2;

  Particles straight = sample_particles(config.initial, config.n, config.seed, 0);
  auto forces = make_force_field(config);
  LangevinIntegrator through(*forces, config.domain, langevin(config));
  for (std::uint64_t s = 0; s < total; ++s) through.step(straight);

  const std::string path = testing_support::fresh_path("restart.h5");
  {
    Particles first = sample_particles(config.initial, config.n, config.seed, 0);
    LangevinIntegrator first_half(*forces, config.domain, langevin(config));
    for (std::uint64_t s = 0; s < half; ++s) first_half.step(first);
    H5mdWriter writer(path, H5mdHeader{}, ParameterSet{}, config.n, 2);
    writer.write_positions(static_cast<std::int64_t>(half), first_half.time(), first.positions);
    writer.write_checkpoint({static_cast<std::int64_t>(half), first_half.time(), config.seed, 0,
                             first_half.save_state()});
  }

  const Checkpoint checkpoint = read_checkpoint(path);
  Particles resumed(checkpoint.positions);
  auto fresh_forces = make_force_field(config);
  LangevinIntegrator second_half(*fresh_forces, config.domain,
                                 {1e-3, 5.0, checkpoint.state.seed, checkpoint.state.replica});
  second_half.restore_state(checkpoint.state.solver_state);
  EXPECT_EQ(second_half.time(), checkpoint.state.time);
  for (std::uint64_t s = half; s < total; ++s) second_half.step(resumed);

  EXPECT_TRUE((resumed.positions.array() == straight.positions.array()).all())
      << "largest difference " << (resumed.positions - straight.positions).cwiseAbs().maxCoeff();
  EXPECT_GT((straight.positions - checkpoint.positions).norm(), 0.0);  // the second half moved
}

}  // namespace
}  // namespace cpm

// A checkpoint holds all a Langevin run needs to continue bit for bit: T steps in one go equal
// T/2 steps, a checkpoint written and read back, and T/2 more steps from what was read.
#include <gtest/gtest.h>

#include "core/initial_law.hpp"
#include "experiments/model_builder.hpp"
#include "io/h5md_reader.hpp"
#include "io/h5md_writer.hpp"
#include "tests/scratch_directory.hpp"

namespace cpm {
namespace {

RunConfig noisy_gas() {
  RunConfig c;
  c.n = 64;
  c.seed = 2024;
  c.domain = Domain::ball(Eigen::VectorXd::Zero(2), 1.5);
  c.potential = {PotentialKind::quadratic, 1.0};
  c.interaction.kernel = InteractionKernel::mollified(1.0, 0.1);
  c.initial.kind = InitialLaw::Kind::gaussian;
  c.initial.centre = (Eigen::VectorXd(2) << 0.2, -0.1).finished();
  c.initial.scale = 0.5;
  c.dynamics.beta = 5.0;
  c.dynamics.step = 1e-3;
  return c;
}

TEST(H5mdRestart, LangevinContinuedFromACheckpointIsBitIdentical) {
  const RunConfig config = noisy_gas();
  const std::uint64_t total = 40, half = total / 2;

  const double eta = config.dynamics.step;
  Particles straight = sample_particles(config.initial, config.n, config.seed, 0);
  build_particle_system(particle_system_spec(config), 0)
      .integrator->advance_to(straight, total * eta);

  const std::string path = testing_support::fresh_path("restart.h5");
  {
    Particles first = sample_particles(config.initial, config.n, config.seed, 0);
    const ParticleSystem first_half = build_particle_system(particle_system_spec(config), 0);
    first_half.integrator->advance_to(first, half * eta);
    const double t = first_half.integrator->time();
    H5mdWriter writer(path, H5mdHeader{}, ParameterSet{}, config.n, 2);
    writer.write_positions(static_cast<std::int64_t>(half), t, first.positions);
    writer.write_checkpoint({static_cast<std::int64_t>(half), t, config.seed, 0,
                             first_half.integrator->save_state(), ""});
  }

  const Checkpoint checkpoint = read_checkpoint(path);
  Particles resumed(checkpoint.positions);
  RunConfig continued = config;
  continued.seed = checkpoint.state.seed;
  const ParticleSystem second_half =
      build_particle_system(particle_system_spec(continued), checkpoint.state.replica);
  second_half.integrator->restore_state(checkpoint.state.solver_state);
  EXPECT_EQ(second_half.integrator->time(), checkpoint.state.time);
  second_half.integrator->advance_to(resumed, total * eta);

  EXPECT_TRUE((resumed.positions.array() == straight.positions.array()).all())
      << "largest difference " << (resumed.positions - straight.positions).cwiseAbs().maxCoeff();
  EXPECT_GT((straight.positions - checkpoint.positions).norm(), 0.0);  // the second half moved
}

}  // namespace
}  // namespace cpm

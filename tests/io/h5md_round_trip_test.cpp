// H5MD files read back exactly what was written: io/h5md_writer.hpp → io/h5md_reader.hpp.
#include <gtest/gtest.h>

#include <limits>

#include "io/h5md_reader.hpp"
#include "io/h5md_writer.hpp"
#include "io/input_error.hpp"
#include "tests/scratch_directory.hpp"

namespace cpm {
namespace {

using testing_support::fresh_path;

ParameterSet sample_parameters() {
  ParameterSet p;
  p.set("particles.n", std::int64_t{7});
  p.set("particles.seed", std::uint64_t{18446744073709551557ULL});  // above 2^63
  p.set("interaction.kernel", std::string("riesz"));
  p.set("interaction.s", 0.5);
  p.set("interaction.epsilon", 0.0);
  p.set("interaction.lambda", 1.25);
  p.set("dynamics.beta", std::numeric_limits<double>::infinity());
  p.set("domain.kind", std::string("box"));
  p.set("domain.lower", std::vector<double>{-1.5, -2.0});
  p.set("domain.upper", std::vector<double>{1.5, 2.0});
  p.set("grid.cells", std::vector<double>{4, 3});
  p.set("format", std::int64_t{-3});
  return p;
}

// Field values that encode their cell, so any transposition error changes them.
Eigen::VectorXd coded_field(const CellGrid& g, double frame) {
  Eigen::VectorXd v(g.size());
  for (Eigen::Index i = 0; i < g.size(); ++i)
    v[i] = frame * 1000.0 + static_cast<double>(i) + 0.125;
  return v;
}

TEST(H5mdRoundTrip, EveryArrayAndAttributeReadsBackExactly) {
  const std::string path = fresh_path("round_trip.h5");
  const Eigen::Index n = 7;
  const int d = 2;
  H5mdHeader header;
  header.author = "A. Researcher";
  header.creator_details = {{"git_describe", "v0.1-3-gabcdef0"}, {"libraries", "Eigen 3.4.0"}};
  CellGrid grid{2, {4, 3, 1}, {-1.5, -2.0, 0.0}, {0.75, 4.0 / 3.0, 1.0}};
  std::vector<std::uint8_t> mask(12, 1);
  mask[0] = mask[11] = 0;

  std::vector<Eigen::MatrixXd> positions;
  std::vector<Eigen::VectorXd> density;
  const std::vector<std::string> names = {"energy_total", "radial_extent", "w1"};
  RestartState state{30,
                     0.75,
                     42,
                     3,
                     {{"adaptive_step", 1.0 / 3.0}, {"accepted", 17.0}},
                     "(fftw-3.3.10 fftw_wisdom #x1 #x2 #x3 #x4)\n"};
  {
    H5mdWriter writer(path, header, sample_parameters(), n, d);
    writer.set_grid(grid, mask);
    for (int f = 0; f < 4; ++f) {
      positions.push_back(Eigen::MatrixXd::Random(n, d) * std::pow(10.0, f));
      density.push_back(coded_field(grid, f));
      const std::int64_t step = 10 * f;
      const double time = 0.025 * step;
      writer.write_positions(step, time, positions.back());
      writer.write_observables(step, time, names, {f + 0.5, -f * 1e-300, 1.0 / (f + 3)});
      writer.write_field(kDensityField, step, time, density.back());
      writer.write_field("potential", step, time, -density.back());
      if (step == state.step) writer.write_checkpoint(state);
    }
  }

  const H5mdRun run = read_h5md(path);
  EXPECT_EQ(run.version, (std::array<std::int64_t, 2>{1, 1}));
  EXPECT_EQ(run.header, header);
  EXPECT_EQ(run.parameters, sample_parameters());
  EXPECT_EQ(run.particle_group, kH5mdParticleGroup);
  EXPECT_EQ(run.dim, d);
  EXPECT_EQ(run.boundary, (std::vector<std::string>{"none", "none"}));
  EXPECT_EQ(run.position_clock.step, (std::vector<std::int64_t>{0, 10, 20, 30}));
  EXPECT_EQ(run.position_clock.time, (std::vector<double>{0.0, 0.25, 0.5, 0.75}));
  ASSERT_EQ(run.positions.size(), 4u);
  for (int f = 0; f < 4; ++f) EXPECT_EQ(run.positions[f], positions[f]) << "frame " << f;
  ASSERT_EQ(run.observables.size(), 3u);
  EXPECT_EQ(run.observables.at("w1").second,
            (std::vector<double>{1.0 / 3, 1.0 / 4, 1.0 / 5, 1.0 / 6}));
  EXPECT_EQ(run.observables.at("radial_extent").second,
            (std::vector<double>{-0.0, -1e-300, -2e-300, -3e-300}));
  EXPECT_EQ(run.observables.at("energy_total").first, run.position_clock);
  ASSERT_TRUE(run.grid.has_value());
  EXPECT_EQ(*run.grid, grid);
  EXPECT_EQ(run.mask, mask);
  ASSERT_EQ(run.fields.size(), 2u);
  for (int f = 0; f < 4; ++f) {
    EXPECT_EQ(run.fields.at(kDensityField).second.at(f), density[f]);
    EXPECT_EQ(run.fields.at("potential").second.at(f), -density[f]);
  }
  ASSERT_TRUE(run.restart.has_value());
  EXPECT_EQ(*run.restart, state);
}

TEST(H5mdRoundTrip, GridFieldsKeepTheirCellOrderIn1DAnd3D) {
  for (const CellGrid& grid : {CellGrid{1, {5, 1, 1}, {0.5, 0, 0}, {0.1, 1, 1}},
                               CellGrid{3, {3, 4, 5}, {-1, -2, -3}, {0.5, 0.25, 0.125}}}) {
    const std::string path = fresh_path("grid_" + std::to_string(grid.dim) + ".h5");
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(grid.size()));
    for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = static_cast<std::uint8_t>(i % 3 == 0);
    {
      H5mdWriter writer(path, H5mdHeader{}, ParameterSet{}, 2, grid.dim);
      writer.set_grid(grid, mask);
      writer.write_field("density", 0, 0.0, coded_field(grid, 1));
    }
    const H5mdRun run = read_h5md(path);
    EXPECT_EQ(*run.grid, grid);
    EXPECT_EQ(run.mask, mask);
    EXPECT_EQ(run.fields.at("density").second.at(0), coded_field(grid, 1));
  }
}

TEST(H5mdRoundTrip, CheckpointReturnsTheFrameItMarksNotTheLastOne) {
  const std::string path = fresh_path("checkpoint_mid.h5");
  const CellGrid grid{1, {6, 1, 1}, {-3, 0, 0}, {1, 1, 1}};
  const std::vector<std::uint8_t> mask(6, 1);
  std::vector<Eigen::MatrixXd> positions;
  {
    H5mdWriter writer(path, H5mdHeader{}, sample_parameters(), 5, 3);
    writer.set_grid(grid, mask);
    for (int f = 0; f < 3; ++f) {
      positions.push_back(Eigen::MatrixXd::Random(5, 3));
      writer.write_positions(f, 0.5 * f, positions.back());
      writer.write_field(kDensityField, f, 0.5 * f, coded_field(grid, f));
      if (f == 1) writer.write_checkpoint({1, 0.5, 9, 0, {}, ""});
    }
  }
  const Checkpoint c = read_checkpoint(path);
  EXPECT_EQ(c.state, (RestartState{1, 0.5, 9, 0, {}, ""}));
  EXPECT_EQ(c.positions, positions[1]);
  ASSERT_TRUE(c.grid.has_value());
  EXPECT_EQ(*c.grid, grid);
  EXPECT_EQ(c.density, coded_field(grid, 1));
  EXPECT_EQ(c.parameters, sample_parameters());
}

TEST(H5mdRoundTrip, AnExistingFileIsNeverReplacedWithoutOverwrite) {
  const std::string path = fresh_path("exists.h5");
  { H5mdWriter first(path, H5mdHeader{}, ParameterSet{}, 1, 1); }
  EXPECT_THROW(H5mdWriter(path, H5mdHeader{}, ParameterSet{}, 1, 1), InputError);
  EXPECT_NO_THROW(H5mdWriter(path, H5mdHeader{}, ParameterSet{}, 1, 1, true));
}

TEST(H5mdRoundTrip, CheckpointWithoutAFrameAtItsStepIsRefused) {
  const std::string path = fresh_path("early_checkpoint.h5");
  H5mdWriter writer(path, H5mdHeader{}, ParameterSet{}, 2, 1);
  EXPECT_THROW(writer.write_checkpoint({0, 0.0, 1, 0, {}, ""}), std::logic_error);
  writer.write_positions(5, 0.5, Eigen::MatrixXd::Zero(2, 1));
  EXPECT_THROW(writer.write_checkpoint({6, 0.6, 1, 0, {}, ""}), std::logic_error);
  EXPECT_THROW(writer.write_positions(4, 0.4, Eigen::MatrixXd::Zero(2, 1)), std::invalid_argument);
}

}  // namespace
}  // namespace cpm

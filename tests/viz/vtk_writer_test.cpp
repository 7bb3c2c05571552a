// ParaView series from VtkSeriesWriter read back with VTK's own Python readers
// (tests/viz/read_vtk_series.py): the .pvd, every .vtp and .vti it lists, point counts, time
// steps, array names and values. Skipped where /usr/bin/python3 has no vtk module.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/scratch_directory.hpp"
#include "viz/vtk_writer.hpp"

namespace cpm {
namespace {

using testing_support::fresh_path;

bool python_has_vtk() {
  return std::system("/usr/bin/python3 -c 'import vtk' >/dev/null 2>&1") == 0;
}

// Frame f at time f/4: positions f + k/64 + a/8, force −x, local density k; fields
// density f + (cell index)/1024 and potential −density; mask 1 on odd cells.
std::string write_series(const std::string& name, Eigen::Index n, int dim, int frames,
                         const CellGrid* grid) {
  const std::string directory = fresh_path(name);
  VtkSeriesWriter writer(directory);
  if (grid) {
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(grid->size()));
    for (std::size_t c = 0; c < mask.size(); ++c) mask[c] = c % 2;
    writer.set_grid(*grid, mask);
  }
  const Eigen::VectorXd local_density =
      Eigen::VectorXd::LinSpaced(n, 0, static_cast<double>(n - 1));
  for (int f = 0; f < frames; ++f) {
    Eigen::MatrixXd x(n, dim);
    for (Eigen::Index k = 0; k < n; ++k)
      for (int a = 0; a < dim; ++a) x(k, a) = f + k / 64.0 + a / 8.0;
    const Eigen::MatrixXd force = -x;
    std::vector<NamedArray> fields;
    Eigen::VectorXd density, potential;
    if (grid) {
      density = Eigen::VectorXd::LinSpaced(grid->size(), 0, static_cast<double>(grid->size() - 1)) /
                1024.0;
      density.array() += f;
      potential = -density;
      fields.push_back(NamedArray::scalar("density", density));
      fields.push_back(NamedArray::scalar("potential", potential));
    }
    writer.write_frame(
        0.25 * f, x,
        {NamedArray::vector("force", force), NamedArray::scalar("local_density", local_density)},
        fields);
  }
  return writer.collection_path();
}

int read_with_vtk(const std::string& pvd, const std::string& arguments) {
  const std::string command =
      "/usr/bin/python3 " CPM_SOURCE_DIR "/tests/viz/read_vtk_series.py '" + pvd + "' " + arguments;
  return std::system(command.c_str());
}

TEST(VtkSeriesWriter, TwoDimensionalRunWithGridReadsBackInVtk) {
  if (!python_has_vtk()) GTEST_SKIP() << "/usr/bin/python3 has no vtk module";
  const CellGrid grid{2, {5, 4, 1}, {-1.25, -1.0, 0.0}, {0.5, 0.5, 1.0}};
  EXPECT_EQ(read_with_vtk(write_series("run2d", 30, 2, 3, &grid), "30 3 2 5,4,1"), 0);
}

TEST(VtkSeriesWriter, ThreeDimensionalRunWithGridReadsBackInVtk) {
  if (!python_has_vtk()) GTEST_SKIP() << "/usr/bin/python3 has no vtk module";
  const CellGrid grid{3, {3, 4, 2}, {0, 0, 0}, {0.5, 0.25, 1.0}};
  EXPECT_EQ(read_with_vtk(write_series("run3d", 12, 3, 2, &grid), "12 2 3 3,4,2"), 0);
}

TEST(VtkSeriesWriter, OneDimensionalParticlesOnlyReadBackInVtk) {
  if (!python_has_vtk()) GTEST_SKIP() << "/usr/bin/python3 has no vtk module";
  EXPECT_EQ(read_with_vtk(write_series("run1d", 17, 1, 4, nullptr), "17 4 1"), 0);
}

TEST(VtkSeriesWriter, RejectsTimesThatDoNotIncreaseAndArraysOfTheWrongLength) {
  VtkSeriesWriter writer(fresh_path("bad"));
  const Eigen::MatrixXd x = Eigen::MatrixXd::Zero(4, 2);
  writer.write_frame(1.0, x, {});
  EXPECT_THROW(writer.write_frame(1.0, x, {}), std::invalid_argument);
  const Eigen::VectorXd short_array = Eigen::VectorXd::Zero(3);
  EXPECT_THROW(writer.write_frame(2.0, x, {NamedArray::scalar("rho", short_array)}),
               std::invalid_argument);
  const Eigen::VectorXd field = Eigen::VectorXd::Zero(4);
  EXPECT_THROW(writer.write_frame(3.0, x, {}, {NamedArray::scalar("density", field)}),
               std::logic_error);
}

TEST(VtkSeriesWriter, ReplacedSeriesLeavesNoFramesOfTheEarlierOne) {
  const std::string dir = fresh_path("replaced");
  const Eigen::MatrixXd x = Eigen::MatrixXd::Zero(4, 2);
  {
    VtkSeriesWriter first(dir);
    for (int k = 0; k < 3; ++k) first.write_frame(k, x, {});
  }
  std::ofstream(dir + "/notes.txt") << "kept";
  std::ofstream(dir + "/other_particles_0000.vtp") << "kept";
  std::ofstream(dir + "/run_particles_0007.vtp") << "an older version's frame beside the .pvd";
  VtkSeriesWriter second(dir);
  second.write_frame(0.0, x, {});
  EXPECT_TRUE(std::filesystem::exists(dir + "/run_frames/run_particles_0000.vtp"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/run_frames/run_particles_0001.vtp"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/run_frames/run_particles_0002.vtp"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/notes.txt"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/other_particles_0000.vtp"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/run_particles_0007.vtp"));
  // The collection at the top names the frames in the sub-folder.
  std::ifstream pvd(dir + "/run.pvd");
  const std::string text((std::istreambuf_iterator<char>(pvd)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("file=\"run_frames/run_particles_0000.vtp\""), std::string::npos) << text;
}

}  // namespace
}  // namespace cpm

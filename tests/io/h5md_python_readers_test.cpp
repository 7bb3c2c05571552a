// Files from H5mdWriter open in the tools users analyse runs with: h5py and MDAnalysis's H5MD
// reader (tests/io/read_h5md.py checks shapes, attributes and values). Skipped where
// /usr/bin/python3 lacks the module.
#include <gtest/gtest.h>

#include <cstdlib>

#include "io/h5md_writer.hpp"
#include "tests/scratch_directory.hpp"

namespace cpm {
namespace {

using testing_support::fresh_path;

bool python_has(const std::string& module) {
  const std::string command =
      "/usr/bin/python3 -W ignore -c 'import " + module + "' >/dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

// A 3D run with value[f][k][a] = f + k/64 + a/8, observable energy = f/4 and a density field
// f + (cell index)/1024 on a 2×3×4 grid: what read_h5md.py expects.
void write_run(const std::string& path, const H5mdHeader& header, Eigen::Index n, int frames) {
  ParameterSet p;
  p.set("particles.n", std::int64_t{n});
  p.set("interaction.kernel", std::string("riesz"));
  p.set("interaction.s", 1.5);
  H5mdWriter writer(path, header, p, n, 3);
  const CellGrid grid{3, {2, 3, 4}, {-1, -1.5, -2}, {1, 1, 1}};
  writer.set_grid(grid, std::vector<std::uint8_t>(24, 1));
  for (int f = 0; f < frames; ++f) {
    Eigen::MatrixXd x(n, 3);
    for (Eigen::Index k = 0; k < n; ++k)
      for (int a = 0; a < 3; ++a) x(k, a) = f + k / 64.0 + a / 8.0;
    writer.write_positions(10 * f, 0.5 * f, x);
    writer.write_observables(10 * f, 0.5 * f, {"energy"}, {f / 4.0});
    writer.write_field(kDensityField, 10 * f, 0.5 * f,
                       Eigen::VectorXd::LinSpaced(24, 0, 23).array() / 1024.0 + f);
  }
}

int run_reader(const std::string& path, const std::string& options) {
  const std::string command = "/usr/bin/python3 -W ignore " CPM_SOURCE_DIR
                              "/tests/io/read_h5md.py '" +
                              path + "' 20 5 3 2,3,4 " + options;
  return std::system(command.c_str());
}

TEST(H5mdPythonReaders, H5pySeesTheH5mdLayoutWithItsShapesAndValues) {
  if (!python_has("h5py")) GTEST_SKIP() << "/usr/bin/python3 has no h5py";
  const std::string path = fresh_path("h5py.h5");
  write_run(path, H5mdHeader{}, 20, 5);
  EXPECT_EQ(run_reader(path, ""), 0);
}

TEST(H5mdPythonReaders, MdanalysisReadsDimensionlessRunWithoutUnitConversion) {
  if (!python_has("h5py") || !python_has("MDAnalysis")) GTEST_SKIP() << "no h5py or MDAnalysis";
  const std::string path = fresh_path("mdanalysis.h5");
  write_run(path, H5mdHeader{}, 20, 5);
  EXPECT_EQ(run_reader(path, "--mdanalysis"), 0);
}

TEST(H5mdPythonReaders, MdanalysisOpensRunWithUnitsInOneLine) {
  if (!python_has("h5py") || !python_has("MDAnalysis")) GTEST_SKIP() << "no h5py or MDAnalysis";
  const std::string path = fresh_path("with_units.h5md");
  H5mdHeader header;
  header.length_unit = "Angstrom";
  header.time_unit = "ps";
  write_run(path, header, 20, 5);
  EXPECT_EQ(run_reader(path, "--mdanalysis --units"), 0);
}

}  // namespace
}  // namespace cpm

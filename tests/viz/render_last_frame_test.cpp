// viz/render_last_frame.py: the .pvd parsing runs with any Python; the rendering needs ParaView's
// paraview.simple, which the build machine cannot carry next to python3-vtk9, so that part runs
// only where pvbatch, pvpython or a Python with paraview.simple is installed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "tests/scratch_directory.hpp"
#include "viz/vtk_writer.hpp"

namespace cpm {
namespace {

using testing_support::fresh_path;

const std::string kScript = CPM_SOURCE_DIR "/viz/render_last_frame.py";

// A 2D series of three frames (t = 0, 0.5, 1) with a density on a 16 × 12 grid.
std::string write_series(const std::string& name) {
  VtkSeriesWriter writer(fresh_path(name));
  const CellGrid grid{2, {16, 12, 1}, {-2.0, -1.5, 0.0}, {0.25, 0.25, 1.0}};
  writer.set_grid(grid, std::vector<std::uint8_t>(static_cast<std::size_t>(grid.size()), 1));
  for (int f = 0; f < 3; ++f) {
    const Eigen::MatrixXd x = Eigen::MatrixXd::Random(200, 2) * (1.0 + f);
    const Eigen::VectorXd density = Eigen::VectorXd::LinSpaced(grid.size(), 0.0, 1.0);
    writer.write_frame(0.5 * f, x, {}, {NamedArray::scalar("density", density)});
  }
  return writer.collection_path();
}

// The command that runs a paraview.simple script headless here, or "" if there is none.
std::string paraview_python() {
  if (std::system("pvbatch --version >/dev/null 2>&1") == 0) return "pvbatch";
  if (std::system("pvpython --version >/dev/null 2>&1") == 0)
    return "pvpython --force-offscreen-rendering";
  if (std::system("/usr/bin/python3 -c 'import paraview.simple' >/dev/null 2>&1") == 0)
    return "/usr/bin/python3";
  return "";
}

TEST(RenderLastFrame, ScriptPicksTheLatestTimeOfTheCollection) {
  if (std::system("/usr/bin/python3 --version >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no /usr/bin/python3";
  const std::string pvd = write_series("pick");
  const std::string check = "import sys; sys.path.insert(0, '" CPM_SOURCE_DIR
                            "/viz'); import render_last_frame as r; "
                            "t, p, g = r.last_frame('" +
                            pvd +
                            "'); "
                            "sys.exit(0 if t == 1.0 and p.endswith('run_particles_0002.vtp') and "
                            "g.endswith('run_grid_0002.vti') else 1)";
  EXPECT_EQ(std::system(("/usr/bin/python3 -B -c \"" + check + "\"").c_str()), 0);
}

TEST(RenderLastFrame, RendersAPngOfTheLastFrameWhereParaViewIsInstalled) {
  const std::string python = paraview_python();
  if (python.empty())
    GTEST_SKIP()
        << "paraview.simple is not importable here (Debian's python3-paraview conflicts "
           "with python3-vtk9); the render script is exercised where ParaView is installed";
  const std::string pvd = write_series("render");
  const std::string png = fresh_path("last_frame.png");
  ASSERT_EQ(std::system((python + " " + kScript + " '" + pvd + "' '" + png + "'").c_str()), 0);
  std::ifstream in(png, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ASSERT_GT(bytes.size(), 5000u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

}  // namespace
}  // namespace cpm

// viz/render_last_frame.py: the .pvd parsing runs with any Python; the rendering needs ParaView's
// paraview.simple, which the build machine cannot carry next to python3-vtk9, so that part runs
// only where pvbatch, pvpython or a Python with paraview.simple is installed.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

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

// Runs `command` in a shell; its exit code and standard output.
std::pair<int, std::string> run_capturing(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return {-1, out};
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// The command that runs a paraview.simple script headless here, or "" if there is none. A
// candidate counts only if its interpreter imports paraview.simple: Debian's `paraview` package
// installs pvbatch, but without python3-paraview (which conflicts with python3-vtk9) its Python
// cannot import the module, and the render test must then skip rather than fail.
std::string paraview_python() {
  const std::string probe = fresh_path("probe_paraview.py");
  std::ofstream(probe) << "import paraview.simple\nprint('cpm-paraview-ok')\n";
  for (const std::string candidate :
       {"pvbatch", "pvpython --force-offscreen-rendering", "/usr/bin/python3"}) {
    const auto [code, out] =
        run_capturing("timeout 120 " + candidate + " '" + probe + "' 2>/dev/null");
    if (code == 0 && out.find("cpm-paraview-ok") != std::string::npos) return candidate;
  }
  return "";
}

// PATH with `directory` in front for the life of the object.
class PathPrefix {
 public:
  explicit PathPrefix(const std::string& directory) {
    const char* path = std::getenv("PATH");
    saved_ = path ? path : "";
    ::setenv("PATH", (directory + ":" + saved_).c_str(), 1);
  }
  ~PathPrefix() { ::setenv("PATH", saved_.c_str(), 1); }

 private:
  std::string saved_;
};

// A fake `pvbatch` in a fresh folder: a shell script running `body`.
std::string fake_pvbatch(const std::string& name, const std::string& body) {
  const std::string directory = fresh_path(name);
  std::filesystem::create_directories(directory);
  const std::string script = directory + "/pvbatch";
  std::ofstream(script) << "#!/bin/sh\n" << body << "\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add);
  return directory;
}

// Debian's pvbatch beside python3-vtk9: the binary runs, its Python cannot import
// paraview.simple. The probe must not take it for a working ParaView.
TEST(RenderLastFrame, ProbeRejectsAPvbatchWhosePythonCannotImportParaviewSimple) {
  const PathPrefix path(
      fake_pvbatch("broken_pvbatch",
                   "echo 'Traceback (most recent call last):' >&2\n"
                   "echo \"ModuleNotFoundError: No module named 'paraview.simple'\" >&2\nexit 1"));
  const std::string python = paraview_python();
  EXPECT_NE(python, "pvbatch");
}

// A pvbatch that prints what the probe asks but exits with an error is not taken either, and
// one whose Python imports paraview.simple is.
TEST(RenderLastFrame, ProbeAcceptsOnlyAPvbatchThatImportsParaviewSimple) {
  {
    const PathPrefix path(fake_pvbatch("failing_pvbatch", "echo cpm-paraview-ok\nexit 3"));
    EXPECT_NE(paraview_python(), "pvbatch");
  }
  // A stand-in paraview package for a Python interpreter run as "pvbatch".
  const std::string package = fresh_path("fake_paraview");
  std::filesystem::create_directories(package + "/paraview");
  std::ofstream(package + "/paraview/__init__.py") << "";
  std::ofstream(package + "/paraview/simple.py") << "";
  if (std::system("/usr/bin/python3 --version >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no /usr/bin/python3";
  const PathPrefix path(fake_pvbatch(
      "working_pvbatch", "PYTHONPATH='" + package + "' exec /usr/bin/python3 -B \"$@\""));
  EXPECT_EQ(paraview_python(), "pvbatch");
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

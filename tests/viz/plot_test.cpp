// draw_figure renders real PNGs headless with gnuplot, and warns in one line when it cannot.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/scratch_directory.hpp"
#include "viz/plot.hpp"

namespace cpm {
namespace {

using testing_support::fresh_path;

std::string table_with_distances() {
  const std::string csv = fresh_path("observables.csv");
  std::ofstream out(csv);
  out << "time,energy_total,w1,mmd\n";
  for (int k = 0; k <= 20; ++k)
    out << 0.1 * k << ',' << 1.0 / (1 + k) << ',' << std::exp(-0.5 * k) << ','
        << (k == 3 ? 0.0 : 1e-3 / (1 + k)) << '\n';
  return csv;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The PNG signature, then the IHDR chunk with the big-endian width and height.
void expect_png(const std::string& path, std::uint32_t width, std::uint32_t height) {
  const std::string png = bytes_of(path);
  ASSERT_GT(png.size(), 5000u) << path << " is too small to hold a plot";
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(png[at + i]);
    return v;
  };
  EXPECT_EQ(be32(16), width);
  EXPECT_EQ(be32(20), height);
}

bool gnuplot_installed() {
  return std::system("gnuplot --version >/dev/null 2>&1") == 0;
}

// Standard error, captured while `body` runs.
template <class Body>
std::string captured_stderr(Body body) {
  ::testing::internal::CaptureStderr();
  body();
  return ::testing::internal::GetCapturedStderr();
}

TEST(Plot, TimeSeriesOnLinearAndLogScalesAreValidPngsRedrawnByTheirScripts) {
  if (!gnuplot_installed()) GTEST_SKIP() << "gnuplot is not installed";
  const std::string csv = table_with_distances();
  const std::string energy = fresh_path("energy.png"), distances = fresh_path("distances.png");
  EXPECT_TRUE(
      draw_figure({energy, "energy", {table_panel(csv, "time", {"energy_total"}, "E", false)}}));
  EXPECT_TRUE(draw_figure({distances,
                           "particles vs PDE",
                           {table_panel(csv, "time", {"w1", "mmd"}, "distance", true)}}));
  expect_png(energy, 960, 640);
  expect_png(distances, 960, 640);
  // The kept script and data redraw the plot by hand.
  const std::string script = (testing_support::scratch_directory() / "distances.gp").string();
  const std::string redrawn = bytes_of(distances);
  std::filesystem::remove(distances);
  ASSERT_EQ(std::system(("gnuplot '" + script + "'").c_str()), 0);
  EXPECT_EQ(bytes_of(distances).size(), redrawn.size());
}

TEST(Plot, PanelsWithErrorBarsFitsLevelsAndBarChartsAreDrawnSideBySide) {
  if (!gnuplot_installed()) GTEST_SKIP() << "gnuplot is not installed";
  const std::vector<double> n = {100, 1000, 10000};
  Panel loglog{"w1", "N", "distance", true, true, {}, {}};
  loglog.curves.push_back(
      {"mean ± SE", n, {0.1, 0.03, 0.01}, {0.01, 0.003, 0.001}, Curve::Style::lines_points, 0});
  loglog.curves.push_back({"fit", n, {0.1, 0.0316, 0.01}, {}, Curve::Style::dashed, 0});
  loglog.curves.push_back({"floor", n, {0.08, 0.025, 0.008}, {}, Curve::Style::dotted, 0});
  Panel bars{"", "", "accuracy", false, false, {}, {"softmax", "kernel-favor"}};
  bars.curves.push_back({"sst2", {}, {0.8, 0.79}, {0.01, 0.02}, Curve::Style::points, -1});
  bars.curves.push_back(
      {"rotten_tomatoes", {}, {0.77, std::nan("")}, {0.01, 0.0}, Curve::Style::points, -1});
  const std::string png = fresh_path("panels.png");
  EXPECT_TRUE(draw_figure({png, "two panels", {loglog, bars}, 0}));
  expect_png(png, 2 * 560, 440);
}

TEST(Plot, UnknownColumnIsNamed) {
  try {
    table_panel(table_with_distances(), "time", {"w2"}, "", true);
    FAIL() << "a missing column was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no column 'w2'"), std::string::npos) << e.what();
  }
}

TEST(Plot, CurvesOfUnequalLengthAreRefused) {
  Panel p;
  p.curves.push_back({"bad", {1, 2, 3}, {1, 2}, {}, Curve::Style::line, -1});
  EXPECT_THROW(draw_figure({fresh_path("bad.png"), "", {p}, 0}), std::invalid_argument);
}

// The one policy: a figure gnuplot cannot draw is a one-line warning, and the caller goes on.
TEST(Plot, GnuplotFailureIsAOneLineWarning) {
  if (!gnuplot_installed()) GTEST_SKIP() << "gnuplot is not installed";
  const std::string csv = fresh_path("zeros.csv");
  std::ofstream(csv) << "time,w1\n0,0\n1,0\n";
  bool drawn = true;
  const std::string message = captured_stderr([&] {
    drawn =
        draw_figure({fresh_path("zeros.png"), "", {table_panel(csv, "time", {"w1"}, "", true)}});
  });
  EXPECT_FALSE(drawn);
  EXPECT_EQ(
      message.rfind("cpm: warning: " + fresh_path("zeros.png") + " not drawn: gnuplot failed", 0),
      0u)
      << message;
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
}

TEST(Plot, MissingGnuplotIsAWarningNamingIt) {
  const std::string csv = table_with_distances();
  const std::string saved = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", fresh_path("empty_bin").c_str(), 1);
  bool drawn = true;
  const std::string message = captured_stderr([&] {
    drawn = draw_figure({fresh_path("y.png"), "", {table_panel(csv, "time", {"w1"}, "", false)}});
  });
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_FALSE(drawn);
  EXPECT_NE(message.find("gnuplot not found"), std::string::npos) << message;
}

}  // namespace
}  // namespace cpm

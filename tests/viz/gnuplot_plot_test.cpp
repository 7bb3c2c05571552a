// plot_time_series renders a real PNG headless with gnuplot, and says clearly when it cannot.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/scratch_directory.hpp"
#include "viz/gnuplot_plot.hpp"

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

TEST(GnuplotPlot, LinearAndLogScalePlotsAreValidPngs) {
  if (!gnuplot_installed()) GTEST_SKIP() << "gnuplot is not installed";
  const std::string csv = table_with_distances();
  const std::string energy = fresh_path("energy.png"), distances = fresh_path("distances.png");
  plot_time_series({csv, energy, "time", {"energy_total"}, false, "energy", "E"});
  plot_time_series({csv, distances, "time", {"w1", "mmd"}, true, "particles vs PDE", "distance"});
  expect_png(energy, 960, 640);
  expect_png(distances, 960, 640);
  // The kept script redraws the plot by hand.
  const std::string script = (testing_support::scratch_directory() / "distances.gp").string();
  const std::string redrawn = bytes_of(distances);
  std::filesystem::remove(distances);
  ASSERT_EQ(std::system(("gnuplot '" + script + "'").c_str()), 0);
  EXPECT_EQ(bytes_of(distances).size(), redrawn.size());
}

TEST(GnuplotPlot, UnknownColumnIsNamed) {
  try {
    plot_time_series({table_with_distances(), fresh_path("x.png"), "time", {"w2"}, true, "", ""});
    FAIL() << "a missing column was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no column 'w2'"), std::string::npos) << e.what();
  }
}

TEST(GnuplotPlot, GnuplotFailureIsReportedInOneLine) {
  if (!gnuplot_installed()) GTEST_SKIP() << "gnuplot is not installed";
  const std::string csv = fresh_path("zeros.csv");
  std::ofstream(csv) << "time,w1\n0,0\n1,0\n";
  try {
    plot_time_series({csv, fresh_path("zeros.png"), "time", {"w1"}, true, "", ""});
    FAIL() << "a log plot without positive values was accepted";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(
        message.rfind(
            "gnuplot failed on " + (testing_support::scratch_directory() / "zeros.gp").string(), 0),
        0u)
        << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(GnuplotPlot, MissingGnuplotGivesAClearError) {
  const std::string csv = table_with_distances();
  const std::string saved = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", fresh_path("empty_bin").c_str(), 1);
  try {
    plot_time_series({csv, fresh_path("y.png"), "time", {"w1"}, false, "", ""});
    ADD_FAILURE() << "no error without gnuplot";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("gnuplot not found"), std::string::npos) << e.what();
  }
  ::setenv("PATH", saved.c_str(), 1);
}

}  // namespace
}  // namespace cpm

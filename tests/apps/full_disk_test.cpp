// A full disk: past a file-size limit (ulimit -f, in 512-byte blocks for sh: 1.5 MB), as past a
// quota or on a full file system, `cpm run` stops before the frame that does not fit, with one
// line naming run.h5 and exit code 1; every earlier frame stays readable and the run continues
// from them into another folder.
#include <gtest/gtest.h>

#include <algorithm>

#include "io/h5md_reader.hpp"
#include "tests/command_runner.hpp"

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::read_file;
using testing::run_cpm;
using testing::write_file;

TEST(FullDisk, AFileSizeLimitStopsTheRunWithEveryEarlierFrameReadable) {
  const auto dir = fresh_directory("full_disk");
  write_file(dir / "run.toml",
             "[particles]\nn = 2000\nseed = 1\n[domain]\nkind = \"ball\"\ncentre = [0.0]\n"
             "radius = 3.0\n[interaction]\nkernel = \"log\"\n[initial]\nlaw = \"gaussian\"\n"
             "std = 0.5\n[dynamics]\nbeta = \"inf\"\nintegrator = \"gradient_flow\"\n"
             "step = 1e-3\nt_end = 1.0\noutputs = 50\n[grid]\ncells = [600]\n[output]\n"
             "directory = \"" +
                 (dir / "out").string() + "\"\n");
  const std::string err = (dir / "err.txt").string();
  const int status = std::system(("ulimit -f 3000; " + std::string(CPM_BINARY) + " run " +
                                  (dir / "run.toml").string() + " --quiet 2>" + err)
                                     .c_str());
  const std::string message = read_file(err);
  ASSERT_TRUE(WIFEXITED(status)) << message;
  EXPECT_EQ(WEXITSTATUS(status), 1) << message;
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  const std::string h5 = (dir / "out" / "run.h5").string();
  EXPECT_EQ(message.rfind("cpm: error: " + h5 + ": no room for the frame at t = ", 0), 0u)
      << message;
  EXPECT_NE(message.find("past the file-size limit (ulimit -f)"), std::string::npos) << message;
  EXPECT_NE(message.find("--restart " + h5), std::string::npos) << message;

  const H5mdRun kept = read_h5md(h5);
  ASSERT_GE(kept.positions.size(), 2u);
  EXPECT_LT(kept.position_clock.time.back(), 1.0);
  ASSERT_TRUE(kept.restart.has_value());
  const auto continued = run_cpm("run " + (dir / "run.toml").string() + " --quiet --restart " + h5 +
                                 " --output " + (dir / "more").string());
  ASSERT_EQ(continued.exit_code, 0) << continued.standard_error;
  EXPECT_EQ(read_h5md((dir / "more" / "run.h5").string()).position_clock.time.back(), 1.0);
}

}  // namespace
}  // namespace cpm

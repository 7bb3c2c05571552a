// `cpm run --restart` on bad input: a damaged, truncated or foreign checkpoint, another model, the
// checkpoint's own folder as output, or a checkpoint at the end time stops with exit code 2 and
// one line naming the file or key; the checkpoint is left byte for byte as it was and no output
// folder is made.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "io/h5md_reader.hpp"
#include "tests/command_runner.hpp"

namespace cpm {
namespace {

using testing::fresh_directory;
using testing::read_file;
using testing::run_cpm;
using testing::write_file;

std::string config(double beta, double t_end, const std::filesystem::path& out) {
  return "[particles]\nn = 30\nseed = 4\n[domain]\nkind = \"ball\"\ncentre = [0.0, 0.0]\n"
         "radius = 2.0\n[interaction]\nkernel = \"log\"\n[initial]\nlaw = \"gaussian\"\n"
         "std = 0.5\n[dynamics]\nbeta = " +
         std::to_string(beta) + "\nstep = 1e-3\nt_end = " + std::to_string(t_end) +
         "\noutputs = 2\n[output]\ndirectory = \"" + out.string() + "\"\n";
}

class RestartCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_directory(::testing::UnitTest::GetInstance()->current_test_info()->name());
    write_file(dir_ / "first.toml", config(10.0, 0.01, dir_ / "first"));
    ASSERT_EQ(run_cpm("run " + (dir_ / "first.toml").string()).exit_code, 0);
    checkpoint_ = dir_ / "first" / "run.h5";
  }

  // Expects exit 2, one line holding `needle`, `file` unchanged and no folder `out`.
  void expect_rejected(const std::string& config_text, const std::filesystem::path& file,
                       const std::string& needle, const std::string& flags = "") {
    const auto out = dir_ / "continued";
    write_file(dir_ / "continue.toml", config_text);
    const std::string before = read_file(file);
    const auto result = run_cpm("run " + (dir_ / "continue.toml").string() + " --restart " +
                                file.string() + " " + flags);
    EXPECT_EQ(result.exit_code, 2) << result.standard_error;
    EXPECT_EQ(std::count(result.standard_error.begin(), result.standard_error.end(), '\n'), 1)
        << result.standard_error;
    EXPECT_NE(result.standard_error.find(needle), std::string::npos) << result.standard_error;
    EXPECT_EQ(read_file(file), before) << "the checkpoint was modified";
    EXPECT_FALSE(std::filesystem::exists(out)) << "an output folder was made";
  }

  std::filesystem::path dir_, checkpoint_;
};

TEST_F(RestartCommand, GoodCheckpointContinues) {
  write_file(dir_ / "continue.toml", config(10.0, 0.02, dir_ / "continued"));
  const auto result =
      run_cpm("run " + (dir_ / "continue.toml").string() + " --restart " + checkpoint_.string());
  EXPECT_EQ(result.exit_code, 0) << result.standard_error;
  EXPECT_TRUE(std::filesystem::exists(dir_ / "continued" / "run.h5"));
}

TEST_F(RestartCommand, ContinuedProcessEndsBitForBitWhereOneProcessEnds) {
  write_file(dir_ / "whole.toml", config(10.0, 0.02, dir_ / "whole"));
  ASSERT_EQ(run_cpm("run " + (dir_ / "whole.toml").string()).exit_code, 0);
  write_file(dir_ / "continue.toml", config(10.0, 0.02, dir_ / "continued"));
  ASSERT_EQ(
      run_cpm("run " + (dir_ / "continue.toml").string() + " --restart " + checkpoint_.string())
          .exit_code,
      0);
  const H5mdRun whole = read_h5md((dir_ / "whole" / "run.h5").string());
  const H5mdRun continued = read_h5md((dir_ / "continued" / "run.h5").string());
  EXPECT_EQ(whole.position_clock.step.back(), continued.position_clock.step.back());
  EXPECT_TRUE(whole.positions.back() == continued.positions.back());
}

TEST_F(RestartCommand, TruncatedCheckpointIsRefused) {
  const auto truncated = dir_ / "truncated.h5";
  std::filesystem::copy_file(checkpoint_, truncated);
  std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) / 2);
  expect_rejected(config(10.0, 0.02, dir_ / "continued"), truncated, "truncated.h5", "--overwrite");
}

TEST_F(RestartCommand, CorruptCheckpointIsRefused) {
  const auto corrupt = dir_ / "corrupt.h5";
  std::string bytes = read_file(checkpoint_);
  for (std::size_t i = 0; i < 64; ++i) bytes[i] = static_cast<char>(0x5a);  // the superblock
  write_file(corrupt, bytes);
  expect_rejected(config(10.0, 0.02, dir_ / "continued"), corrupt, "corrupt.h5");
}

TEST_F(RestartCommand, MissingCheckpointIsRefused) {
  const auto out = dir_ / "continued";
  write_file(dir_ / "continue.toml", config(10.0, 0.02, out));
  const auto result = run_cpm("run " + (dir_ / "continue.toml").string() + " --restart " +
                              (dir_ / "absent.h5").string());
  EXPECT_EQ(result.exit_code, 2) << result.standard_error;
  EXPECT_NE(result.standard_error.find("absent.h5"), std::string::npos) << result.standard_error;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST_F(RestartCommand, AnotherModelIsRefused) {
  expect_rejected(config(20.0, 0.02, dir_ / "continued"), checkpoint_, "dynamics.beta");
}

TEST_F(RestartCommand, CheckpointAtTheEndTimeIsRefused) {
  expect_rejected(config(10.0, 0.01, dir_ / "continued"), checkpoint_, "t_end");
}

TEST_F(RestartCommand, TheCheckpointsOwnFolderIsNeverTheOutput) {
  expect_rejected(config(10.0, 0.02, dir_ / "first"), checkpoint_, "output.directory",
                  "--overwrite");
}

}  // namespace
}  // namespace cpm

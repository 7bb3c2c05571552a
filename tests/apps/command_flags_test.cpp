// One set of flags for every command that writes results: --output DIR, --overwrite, --quiet.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/command_runner.hpp"

namespace cpm {
namespace {

TEST(CommandFlags, EveryCommandThatWritesTakesOutputOverwriteAndQuiet) {
  for (const char* command :
       {"run", "converge", "ldp", "concentration", "kernel", "features", "train", "recall"}) {
    std::FILE* pipe = popen((std::string(CPM_BINARY) + " " + command + " --help").c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string help;
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
      help.append(buffer, n);
    EXPECT_EQ(pclose(pipe), 0) << command;
    for (const char* flag : {"--output", "--overwrite", "--quiet"})
      EXPECT_NE(help.find(flag), std::string::npos) << command << ' ' << flag;
  }
}

}  // namespace
}  // namespace cpm

// Every shipped example is a valid configuration of the command its name says it is for (the
// name's first word: features_, kernel_, train_, recall_, converge_, ldp_, concentration_; any
// other name is a `cpm run` configuration).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "experiments/result_commands.hpp"
#include "io/input_error.hpp"
#include "io/text_file.hpp"

namespace cpm {
namespace {

std::string command_of(const std::string& name) {
  for (const std::string& command : result_command_names())
    if (name.rfind(command + "_", 0) == 0) return command;
  return "run";
}

TEST(Examples, EveryShippedExampleIsAValidConfigurationOfItsCommand) {
  int examples = 0;
  for (const auto& entry : std::filesystem::directory_iterator(CPM_SOURCE_DIR "/examples")) {
    if (entry.path().extension() != ".toml") continue;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    const std::string path = entry.path().string();
    try {
      prepare_command(command_of(name), read_text_file(path), path);
    } catch (const InputError& e) {
      ADD_FAILURE() << e.what();
    }
    ++examples;
  }
  EXPECT_GE(examples, 10);
}

}  // namespace
}  // namespace cpm

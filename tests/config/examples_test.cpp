// Every shipped example is a valid configuration of the command its name says it is for.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "config/features_config.hpp"
#include "config/kernel_config.hpp"
#include "config/recall_config.hpp"
#include "config/run_config.hpp"
#include "config/study_config.hpp"
#include "config/train_config.hpp"
#include "io/input_error.hpp"
#include "io/text_file.hpp"

namespace cpm {
namespace {

bool starts_with(const std::string& name, const std::string& prefix) {
  return name.rfind(prefix, 0) == 0;
}

void load_for_its_command(const std::string& path, const std::string& name) {
  if (is_recall_config(read_text_file(path), path))  // `cpm train` on a recall task
    load_recall_config(path);
  else if (starts_with(name, "features_"))
    load_features_config(path);
  else if (starts_with(name, "kernel_"))
    load_kernel_config(path);
  else if (starts_with(name, "train_"))
    load_train_config(path);
  else if (starts_with(name, "converge_"))
    load_convergence_config(path);
  else if (starts_with(name, "ldp_") && is_kernel_concentration_config(read_text_file(path), path))
    load_kernel_concentration_config(path);
  else if (starts_with(name, "ldp_"))
    load_ldp_config(path);
  else
    load_run_config(path);
}

TEST(Examples, EveryShippedExampleIsAValidConfigurationOfItsCommand) {
  int examples = 0;
  for (const auto& entry : std::filesystem::directory_iterator(CPM_SOURCE_DIR "/examples")) {
    if (entry.path().extension() != ".toml") continue;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    try {
      load_for_its_command(entry.path().string(), name);
    } catch (const InputError& e) {
      ADD_FAILURE() << e.what();
    }
    ++examples;
  }
  EXPECT_GE(examples, 10);
}

}  // namespace
}  // namespace cpm

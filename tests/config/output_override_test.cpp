// --output DIR is [output] directory = DIR: the rewritten text reads back with every other value
// of the file, every bit of its numbers included, unchanged.
#include "config/output_override.hpp"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <filesystem>
#include <string>

#include "io/input_error.hpp"
#include "io/text_file.hpp"

namespace cpm {
namespace {

toml::table without_output_directory(const std::string& text) {
  toml::table t = toml::parse(text);
  if (auto* output = t["output"].as_table()) output->erase("directory");
  if (auto* output = t["output"].as_table(); output && output->empty()) t.erase("output");
  return t;
}

TEST(OutputOverride, EveryExampleKeepsItsValuesAndTakesTheDirectory) {
  int examples = 0;
  for (const auto& entry : std::filesystem::directory_iterator(CPM_SOURCE_DIR "/examples")) {
    if (entry.path().extension() != ".toml") continue;
    SCOPED_TRACE(entry.path().filename().string());
    const std::string text = read_text_file(entry.path().string());
    const std::string rewritten = with_output_directory(text, "x.toml", "elsewhere/out");
    EXPECT_EQ(toml::parse(rewritten)["output"]["directory"].value<std::string>(),
              std::string("elsewhere/out"));
    EXPECT_EQ(without_output_directory(rewritten), without_output_directory(text));
    ++examples;
  }
  EXPECT_GE(examples, 10);
}

TEST(OutputOverride, NumbersKeepEveryBit) {
  const std::string text = "a = 0.1\nb = 1e-300\nc = [2.5e16, -0.30000000000000004]\n";
  EXPECT_EQ(toml::parse(with_output_directory(text, "x.toml", "d")).at_path("c[1]").value<double>(),
            -0.30000000000000004);
  EXPECT_EQ(without_output_directory(with_output_directory(text, "x.toml", "d")),
            toml::parse(text));
}

TEST(OutputOverride, NoDirectoryLeavesTheTextAsItIs) {
  const std::string text = "# a comment\n[output]\ndirectory = \"here\"\n";
  EXPECT_EQ(with_output_directory(text, "x.toml", ""), text);
}

TEST(OutputOverride, AnOutputThatIsNotATableIsRefusedByName) {
  try {
    with_output_directory("output = \"here\"\n", "x.toml", "d");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("x.toml: output: expected a table", 0), 0u) << e.what();
  }
  EXPECT_THROW(with_output_directory("[output\n", "x.toml", "d"), InputError);
}

}  // namespace
}  // namespace cpm

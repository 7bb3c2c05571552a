#pragma once
// A per-process scratch folder for tests that write files; removed when the tests exit.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace cpm::testing_support {

inline const std::filesystem::path& scratch_directory() {
  struct Scratch {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("cpm_test_" + std::to_string(::getpid()));
    Scratch() { std::filesystem::create_directories(path); }
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Scratch scratch;
  return scratch.path;
}

// A path in the scratch folder with nothing at it yet.
inline std::string fresh_path(const std::string& name) {
  const std::filesystem::path path = scratch_directory() / name;
  std::filesystem::remove_all(path);
  return path.string();
}

}  // namespace cpm::testing_support

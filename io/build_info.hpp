#pragma once
// What a build of cpm is: its version, the `git describe` of the sources it was built from,
// the compiler, the instruction set it was compiled for and the versions of the libraries it
// uses. `cpm --version` prints it; every run records it (run_info.txt, run.h5, config.toml).
#include <string>
#include <utility>
#include <vector>

namespace cpm {

struct BuildInfo {
  std::string version;          // cpm's own, e.g. "0.1"
  std::string git_describe;     // when built; "unknown" outside a git checkout
  std::string compiler;         // e.g. "GNU 12.2.0"
  std::string build_type;       // CMake's, e.g. "Release"
  std::string instruction_set;  // the SIMD level compiled for, e.g. "AVX-512 (-march=native)"
  std::vector<std::pair<std::string, std::string>> libraries;  // (name, version)
};

const BuildInfo& build_info();

// "Eigen 3.4.0, Boost 1.74.0, …".
std::string library_versions();

// The lines of `cpm --version`.
std::string version_text();

}  // namespace cpm

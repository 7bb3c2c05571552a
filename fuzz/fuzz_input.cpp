#include "fuzz/fuzz_input.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace cpm::fuzz {

std::string write_scratch_file(std::string_view bytes, const std::string& suffix) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string path =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/cpm-fuzz-" + std::to_string(::getpid()) + suffix;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write the scratch file " + path);
  return path;
}

}  // namespace cpm::fuzz

#include "io/text_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/input_error.hpp"

namespace cpm {

std::string read_text_file(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw InputError(path + ": is a directory, not a file");
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::uint64_t text_fingerprint(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

}  // namespace cpm

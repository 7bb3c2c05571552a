#pragma once
// Reading a whole text file, with the one-line error of bad input.
#include <cstdint>
#include <string>

namespace cpm {

// The whole content of a file; InputError naming the file when it cannot be read.
std::string read_text_file(const std::string& path);

// FNV-1a of a text: the fingerprint a checkpoint keeps of its configuration file.
std::uint64_t text_fingerprint(const std::string& text);

}  // namespace cpm

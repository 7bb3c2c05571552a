#pragma once
// Reading a whole text file, with the one-line error of bad input.
#include <string>

namespace cpm {

// The whole content of a file; InputError naming the file when it cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace cpm

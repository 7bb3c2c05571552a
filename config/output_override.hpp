#pragma once
// `--output DIR` of every command is the configuration's `[output] directory = DIR`: the command
// line rewrites that one key in the text, and every command's reader takes its folder from it as
// it would from the file.
#include <string>

namespace cpm {

// The TOML text with [output] directory set to `directory` (the text unchanged when `directory` is
// empty); InputError naming `source` for invalid TOML or an `output` key that is not a table.
std::string with_output_directory(const std::string& toml_text, const std::string& source,
                                  const std::string& directory);

}  // namespace cpm

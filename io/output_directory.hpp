#pragma once
// A run writes into its own folder and never silently replaces an earlier run's results.
#include <string>

namespace cpm {

// Creates `path` if needed. If it already holds files, throws InputError unless `overwrite`.
void prepare_output_directory(const std::string& path, bool overwrite);

}  // namespace cpm

#include "io/output_directory.hpp"

#include <filesystem>

#include "io/input_error.hpp"

namespace cpm {

void prepare_output_directory(const std::string& path, bool overwrite) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    if (!fs::is_directory(path, ec)) throw InputError(path + ": exists and is not a directory");
    if (!fs::is_empty(path, ec) && !overwrite)
      throw InputError(
          path + ": holds an earlier run's results; pass --overwrite or set output.directory");
  }
  fs::create_directories(path, ec);
  if (ec) throw InputError(path + ": cannot create the output directory: " + ec.message());
}

}  // namespace cpm

#include "config/output_override.hpp"

#include <toml++/toml.h>

#include <sstream>

#include "config/toml_reader.hpp"
#include "io/input_error.hpp"

namespace cpm {

std::string with_output_directory(const std::string& toml_text, const std::string& source,
                                  const std::string& directory) {
  if (directory.empty()) return toml_text;
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error&) {
    TomlReader::parse(toml_text, source);  // throws the syntax error as every reader reports it
    throw;
  }
  toml::node* output = root.get("output");
  if (output && !output->is_table())
    throw InputError(source + ": output: expected a table (--output sets output.directory)");
  if (!output) root.insert("output", toml::table{});
  root["output"].as_table()->insert_or_assign("directory", directory);
  std::ostringstream text;
  text << root;
  return text.str();
}

}  // namespace cpm

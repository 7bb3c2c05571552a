#pragma once
// Writes TOML documents whose values read back exactly: a double is written with the fewest
// significant digits that parse to the same double (up to 17), so a configuration written by a
// run and read again gives the same run bit for bit.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace cpm {

// TOML literals: 0.5, 1.0, 1e-300, inf, -inf, nan; 7; "text" (escaped); [1.0, 2.5].
std::string toml_float(double value);
std::string toml_integer(std::int64_t value);
std::string toml_string(const std::string& text);
std::string toml_floats(const std::vector<double>& values);
std::string toml_integers(const std::vector<std::int64_t>& values);

class TomlDocument {
 public:
  // A comment line ("# text"); text with newlines becomes several lines.
  TomlDocument& comment(const std::string& text);
  // Starts [name] (a blank line before it).
  TomlDocument& table(const std::string& name);
  // key = literal (the literal from one of the functions above).
  TomlDocument& entry(const std::string& key, const std::string& literal);
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

}  // namespace cpm

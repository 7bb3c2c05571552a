#include "io/toml_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace cpm {

std::string toml_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // The shortest text that reads back as the same double.
  char buffer[40];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  std::string text(buffer, end);
  // TOML floats need a fraction or an exponent ("1" is an integer); its exponents have no '+'.
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  if (const auto plus = text.find("e+"); plus != std::string::npos) text.erase(plus + 1, 1);
  return text;
}

std::string toml_integer(std::int64_t value) {
  return std::to_string(value);
}

std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned char>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string toml_floats(const std::vector<double>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + toml_float(values[i]);
  return out + "]";
}

std::string toml_integers(const std::vector<std::int64_t>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + toml_integer(values[i]);
  return out + "]";
}

TomlDocument& TomlDocument::comment(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    out_ << "#" << (line.empty() ? "" : " ") << line << '\n';
  return *this;
}

TomlDocument& TomlDocument::table(const std::string& name) {
  out_ << "\n[" << name << "]\n";
  return *this;
}

TomlDocument& TomlDocument::entry(const std::string& key, const std::string& literal) {
  out_ << key << " = " << literal << '\n';
  return *this;
}

}  // namespace cpm

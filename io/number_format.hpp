#pragma once
// Numbers in labels, column names and progress lines: `digits` significant digits, no trailing
// zeros (the default formatting of a stream).
#include <sstream>
#include <string>

namespace cpm {

inline std::string format_number(double value, int digits = 4) {
  std::ostringstream o;
  o.precision(digits);
  o << value;
  return o.str();
}

}  // namespace cpm

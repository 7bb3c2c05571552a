#include "io/density_file.hpp"

#include <cmath>
#include <sstream>

#include "io/input_error.hpp"
#include "io/text_file.hpp"

namespace cpm {

std::vector<double> read_density_file(const std::string& path, Eigen::Index cells) {
  std::istringstream lines(read_text_file(path));
  std::vector<double> values;
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    for (char& ch : line)
      if (ch == ',' || ch == ';' || ch == '\t' || ch == '\r') ch = ' ';
    std::istringstream tokens(line);
    std::string token;
    while (tokens >> token) {
      std::size_t used = 0;
      double v = 0.0;
      try {
        v = std::stod(token, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != token.size())
        throw InputError(path + ":" + std::to_string(number) + ": '" + token + "' is not a number");
      if (!std::isfinite(v))
        throw InputError(path + ":" + std::to_string(number) + ": density values must be finite");
      if (v < 0.0)
        throw InputError(path + ":" + std::to_string(number) + ": negative density " + token +
                         " (cell " + std::to_string(values.size()) + ")");
      values.push_back(v);
    }
  }
  if (static_cast<Eigen::Index>(values.size()) != cells)
    throw InputError(path + ": holds " + std::to_string(values.size()) + " values for a grid of " +
                     std::to_string(cells) + " cells");
  double total = 0.0;
  for (double v : values) total += v;
  if (!(total > 0.0)) throw InputError(path + ": the density has zero mass");
  return values;
}

}  // namespace cpm

#pragma once
// A grid density in a text file: the M cell averages in the grid's order (axis 0 fastest),
// separated by spaces, commas or line breaks; '#' starts a comment that runs to the end of the
// line. Bad content throws InputError naming the file and the reason.
#include <Eigen/Dense>
#include <string>
#include <vector>

namespace cpm {

// Reads exactly `cells` finite, non-negative values with a positive sum.
std::vector<double> read_density_file(const std::string& path, Eigen::Index cells);

}  // namespace cpm

#pragma once
// Observed orders of convergence for the grid-refinement tests: prints every error with the
// order between consecutive grids, and returns the least-squares order over all of them.
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

namespace cpm::testing {

// Errors e_k on grids with n_k cells per axis; the order is the slope of −log e against log n.
inline double report_orders(const std::string& name, const std::vector<int>& cells,
                            const std::vector<double>& errors) {
  std::cout << name << ":";
  for (std::size_t i = 0; i < errors.size(); ++i) {
    std::cout << "  n=" << cells[i] << " error=" << errors[i];
    if (i > 0)
      std::cout << " order="
                << std::log(errors[i - 1] / errors[i]) / std::log(double(cells[i]) / cells[i - 1]);
  }
  const double count = static_cast<double>(cells.size());
  double mean_x = 0.0, mean_y = 0.0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    mean_x += std::log(cells[i]) / count;
    mean_y -= std::log(errors[i]) / count;
  }
  double sxy = 0.0, sxx = 0.0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const double dx = std::log(cells[i]) - mean_x;
    sxy += dx * (-std::log(errors[i]) - mean_y);
    sxx += dx * dx;
  }
  const double order = sxy / sxx;
  std::cout << "  fitted order=" << order << '\n';
  return order;
}

}  // namespace cpm::testing

#pragma once
// The median of a sample (the mean of the middle two for an even count; 0 for none): how the
// benchmarks that alternate blocks of work summarise their rounds.
#include <algorithm>
#include <vector>

namespace cpm::bench {

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n == 0 ? 0.0 : n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace cpm::bench

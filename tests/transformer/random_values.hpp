#pragma once
// n values drawn uniformly from [-1, 1) by a seeded std::mt19937, as T: the operands of the
// kernel tests (matrix products, register reductions).
#include <cstddef>
#include <random>
#include <vector>

namespace cpm::testing {

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(uniform(engine));
  return v;
}

}  // namespace cpm::testing

#include "frequencies/qmc_points.hpp"

#include <boost/random/sobol.hpp>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/random_stream.hpp"

namespace cpm {

namespace {

constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;

// The first d primes.
std::vector<int> primes(int d) {
  std::vector<int> p;
  for (int candidate = 2; static_cast<int>(p.size()) < d; ++candidate) {
    bool prime = true;
    for (int q : p) {
      if (q * q > candidate) break;
      if (candidate % q == 0) prime = false;
    }
    if (prime) p.push_back(candidate);
  }
  return p;
}

// The radical inverse of i in base b: its base-b digits mirrored about the radix point.
double radical_inverse(std::uint64_t i, int b) {
  double inverse = 0.0, place = 1.0 / b;
  for (; i > 0; i /= static_cast<std::uint64_t>(b), place /= b)
    inverse += place * static_cast<double>(i % static_cast<std::uint64_t>(b));
  return inverse;
}

// The 64-bit words of the first n Sobol' points, row-major (n·d): the origin, then the engine's.
std::vector<std::uint64_t> sobol_words(Eigen::Index n, int d) {
  if (d < 1 || d > 3667) throw std::invalid_argument("Sobol' points need 1 <= d <= 3667");
  boost::random::sobol engine(static_cast<std::size_t>(d));
  std::vector<std::uint64_t> words(static_cast<std::size_t>(n * d), 0);
  for (std::size_t i = static_cast<std::size_t>(d); i < words.size(); ++i) words[i] = engine();
  return words;
}

// One random word (Sobol') or uniform (Halton) per coordinate.
std::uint64_t coordinate_word(std::uint64_t seed, std::uint64_t replica, int a) {
  RandomStream s(seed, RandomPurpose::qmc_randomisation, replica, static_cast<std::uint64_t>(a));
  const auto high = static_cast<std::uint64_t>(s.uniform() * 4294967296.0);
  const auto low = static_cast<std::uint64_t>(s.uniform() * 4294967296.0);
  return (high << 32) | low;
}

}  // namespace

Eigen::MatrixXd sobol_points(Eigen::Index n, int d) {
  const std::vector<std::uint64_t> words = sobol_words(n, d);
  Eigen::MatrixXd u(n, d);
  for (Eigen::Index i = 0; i < n; ++i)
    for (int a = 0; a < d; ++a)
      u(i, a) =
          static_cast<double>(words[static_cast<std::size_t>(i * d + a)] >> 11) * kTwoToMinus53;
  return u;
}

Eigen::MatrixXd halton_points(Eigen::Index n, int d) {
  if (d < 1 || d > 1000) throw std::invalid_argument("Halton points need 1 <= d <= 1000");
  const std::vector<int> bases = primes(d);
  Eigen::MatrixXd u(n, d);
  for (Eigen::Index i = 0; i < n; ++i)
    for (int a = 0; a < d; ++a) u(i, a) = radical_inverse(static_cast<std::uint64_t>(i), bases[a]);
  return u;
}

Eigen::MatrixXd shifted_sobol_points(Eigen::Index n, int d, std::uint64_t seed,
                                     std::uint64_t replica) {
  const std::vector<std::uint64_t> words = sobol_words(n, d);
  Eigen::MatrixXd u(n, d);
  for (int a = 0; a < d; ++a) {
    const std::uint64_t shift = coordinate_word(seed, replica, a);
    for (Eigen::Index i = 0; i < n; ++i)
      u(i, a) =
          (static_cast<double>((words[static_cast<std::size_t>(i * d + a)] ^ shift) >> 11) + 0.5) *
          kTwoToMinus53;
  }
  return u;
}

Eigen::MatrixXd shifted_halton_points(Eigen::Index n, int d, std::uint64_t seed,
                                      std::uint64_t replica) {
  Eigen::MatrixXd u = halton_points(n, d);
  for (int a = 0; a < d; ++a) {
    RandomStream s(seed, RandomPurpose::qmc_randomisation, replica, static_cast<std::uint64_t>(a));
    const double shift = s.uniform();
    for (Eigen::Index i = 0; i < n; ++i) {
      double v = u(i, a) + shift;
      v -= std::floor(v);
      // Keep the open cube: a point on 0 moves by half an ulp of the 53-bit grid.
      u(i, a) = v > 0.0 ? v : 0.5 * kTwoToMinus53;
    }
  }
  return u;
}

}  // namespace cpm

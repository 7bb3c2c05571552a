#include "learning/paired_statistics.hpp"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "core/random_stream.hpp"

namespace cpm {

McNemarCounts mcnemar_counts(const std::vector<bool>& a_correct,
                             const std::vector<bool>& b_correct) {
  if (a_correct.size() != b_correct.size())
    throw std::invalid_argument("McNemar: the two classifiers were scored on different examples");
  McNemarCounts c;
  for (std::size_t i = 0; i < a_correct.size(); ++i) {
    c.a_only += a_correct[i] && !b_correct[i];
    c.b_only += !a_correct[i] && b_correct[i];
  }
  return c;
}

double mcnemar_exact_p(long long b, long long c) {
  if (b < 0 || c < 0) throw std::invalid_argument("McNemar: counts must be non-negative");
  const long long n = b + c, k = std::min(b, c);
  if (n == 0 || b == c) return 1.0;
  // Σ_{i ≤ k} C(n, i) 2^{−n}: by the recurrence C(n, i+1) = C(n, i)(n − i)/(i + 1) from 2^{−n}
  // while 2^{−n} is a normal double, else each term through log-gamma.
  if (n <= 1000) {
    double term = std::ldexp(1.0, static_cast<int>(-n)), tail = 0.0;
    for (long long i = 0; i <= k; ++i) {
      tail += term;
      term *= static_cast<double>(n - i) / static_cast<double>(i + 1);
    }
    return std::min(1.0, 2.0 * tail);
  }
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  const double log_n_factorial = std::lgamma(static_cast<double>(n) + 1.0);
  double tail = 0.0;
  for (long long i = 0; i <= k; ++i)
    tail += std::exp(log_n_factorial - std::lgamma(static_cast<double>(i) + 1.0) -
                     std::lgamma(static_cast<double>(n - i) + 1.0) + log_half_n);
  return std::min(1.0, 2.0 * tail);
}

PairedTTest paired_t_test(const std::vector<double>& d) {
  if (d.size() < 2) throw std::invalid_argument("paired t test: needs at least two differences");
  PairedTTest r;
  r.n = static_cast<int>(d.size());
  r.mean = std::accumulate(d.begin(), d.end(), 0.0) / r.n;
  double ss = 0.0;
  for (double x : d) ss += (x - r.mean) * (x - r.mean);
  r.sd = std::sqrt(ss / (r.n - 1));
  if (r.sd == 0.0) {
    r.t = r.mean == 0.0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), r.mean);
    r.p = r.mean == 0.0 ? 1.0 : 0.0;
    return r;
  }
  r.t = r.mean / (r.sd / std::sqrt(static_cast<double>(r.n)));
  const boost::math::students_t distribution(static_cast<double>(r.n - 1));
  r.p = 2.0 * boost::math::cdf(boost::math::complement(distribution, std::abs(r.t)));
  return r;
}

PairedTTest paired_t_test(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) throw std::invalid_argument("paired t test: samples differ in size");
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
  return paired_t_test(d);
}

Interval two_level_bootstrap_interval(const std::vector<std::vector<double>>& differences,
                                      int samples, double level, std::uint64_t seed) {
  const std::size_t seeds = differences.size();
  if (seeds == 0 || samples < 1 || !(level > 0.0 && level < 1.0))
    throw std::invalid_argument("bootstrap: needs data, at least one resample and 0 < level < 1");
  for (const auto& d : differences)
    if (d.empty()) throw std::invalid_argument("bootstrap: a seed without examples");
  auto draw = [](RandomStream& s, std::size_t n) {
    return std::min(n - 1, static_cast<std::size_t>(s.uniform() * static_cast<double>(n)));
  };
  std::vector<double> means(static_cast<std::size_t>(samples));
  for (int r = 0; r < samples; ++r) {
    RandomStream stream(seed, RandomPurpose::bootstrap, static_cast<std::uint64_t>(r), 0);
    double total = 0.0;
    for (std::size_t s = 0; s < seeds; ++s) {
      const std::vector<double>& d = differences[draw(stream, seeds)];
      double sum = 0.0;
      for (std::size_t i = 0; i < d.size(); ++i) sum += d[draw(stream, d.size())];
      total += sum / static_cast<double>(d.size());
    }
    means[r] = total / static_cast<double>(seeds);
  }
  std::sort(means.begin(), means.end());
  // Percentiles by linear interpolation between order statistics.
  auto quantile = [&](double q) {
    const double position = q * static_cast<double>(samples - 1);
    const std::size_t below = static_cast<std::size_t>(std::floor(position));
    const std::size_t above = std::min(below + 1, means.size() - 1);
    return means[below] + (position - static_cast<double>(below)) * (means[above] - means[below]);
  };
  const double tail = 0.5 * (1.0 - level);
  return {quantile(tail), quantile(1.0 - tail)};
}

}  // namespace cpm

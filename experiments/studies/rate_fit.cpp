#include "experiments/studies/rate_fit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/random_stream.hpp"

namespace cpm {

void least_squares_line(const std::vector<double>& x, const std::vector<double>& y, double& slope,
                        double& intercept) {
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i] / n;
    my += y[i] / n;
  }
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  slope = sxy / sxx;
  intercept = my - slope * mx;
}

namespace {
double log_mean(const std::vector<double>& v) {
  double sum = 0;
  for (double d : v) sum += d;
  return std::log(sum / static_cast<double>(v.size()));
}
}  // namespace

RateFit fit_rate(const std::vector<double>& ns, const std::vector<std::vector<double>>& samples,
                 int bootstrap_resamples, double confidence, std::uint64_t seed) {
  return fit_log_log(ns, samples, log_mean, bootstrap_resamples, confidence, seed);
}

RateFit fit_log_log(const std::vector<double>& ns, const std::vector<std::vector<double>>& samples,
                    const std::function<double(const std::vector<double>&)>& log_summary,
                    int bootstrap_resamples, double confidence, std::uint64_t seed) {
  if (ns.size() < 2 || ns.size() != samples.size())
    throw std::invalid_argument("a rate needs at least two particle numbers with samples each");
  std::vector<double> log_n(ns.size()), log_d(ns.size());
  for (std::size_t i = 0; i < ns.size(); ++i) {
    if (samples[i].size() < 2)
      throw std::invalid_argument("a rate needs at least two replicas per N");
    log_n[i] = std::log(ns[i]);
    log_d[i] = log_summary(samples[i]);
  }
  RateFit fit;
  least_squares_line(log_n, log_d, fit.slope, fit.intercept);

  std::vector<double> slopes(bootstrap_resamples);
  std::vector<double> resample;
  std::vector<double> log_d_star(ns.size());
  for (int b = 0; b < bootstrap_resamples; ++b) {
    for (std::size_t i = 0; i < ns.size(); ++i) {
      RandomStream stream(seed, RandomPurpose::bootstrap, static_cast<std::uint64_t>(b), i);
      const std::size_t r = samples[i].size();
      resample.resize(r);
      for (std::size_t j = 0; j < r; ++j)
        resample[j] = samples[i][std::min(r - 1, static_cast<std::size_t>(stream.uniform() * r))];
      log_d_star[i] = log_summary(resample);
    }
    double intercept;
    least_squares_line(log_n, log_d_star, slopes[b], intercept);
  }
  std::sort(slopes.begin(), slopes.end());
  const double tail = 0.5 * (1.0 - confidence);
  auto quantile = [&](double q) {
    const double position = q * (bootstrap_resamples - 1);
    const auto lo = static_cast<std::size_t>(std::floor(position));
    const auto hi = std::min(lo + 1, slopes.size() - 1);
    return slopes[lo] + (position - lo) * (slopes[hi] - slopes[lo]);
  };
  fit.slope_low = quantile(tail);
  fit.slope_high = quantile(1.0 - tail);
  return fit;
}

}  // namespace cpm

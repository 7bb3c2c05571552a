#pragma once
// Convergence rates: the slope of log(mean distance) against log(N), with a percentile bootstrap
// confidence interval that resamples the replicas at each N.
#include <cstdint>
#include <functional>
#include <vector>

namespace cpm {

struct RateFit {
  double slope = 0.0;
  double intercept = 0.0;  // log(distance) at N = 1
  double slope_low = 0.0;  // bounds of the central confidence interval
  double slope_high = 0.0;
};

// Ordinary least squares slope and intercept of y against x.
void least_squares_line(const std::vector<double>& x, const std::vector<double>& y, double& slope,
                        double& intercept);

// samples[i] holds the replicas' distances at particle number ns[i] (at least 2 each).
// `confidence` is the interval's coverage, e.g. 0.95; the resampling is seeded, so the interval
// is reproducible.
RateFit fit_rate(const std::vector<double>& ns, const std::vector<std::vector<double>>& samples,
                 int bootstrap_resamples, double confidence, std::uint64_t seed);

// The same fit of any log-summary of the samples at each N (fit_rate's is the log of the mean):
// the slope of log_summary(samples[i]) against log ns[i], the interval from resampling.
RateFit fit_log_log(const std::vector<double>& ns, const std::vector<std::vector<double>>& samples,
                    const std::function<double(const std::vector<double>&)>& log_summary,
                    int bootstrap_resamples, double confidence, std::uint64_t seed);

}  // namespace cpm

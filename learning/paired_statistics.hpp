#pragma once
// Statistics of a paired comparison of two classifiers A and B evaluated on the same examples and
// trained from the same seeds:
//  * McNemar's exact test on per-example outcomes: of the n = b + c discordant examples (b: A right
//    and B wrong, c: A wrong and B right), under H0 each is b or c with probability 1/2, so
//    p = min(1, 2 Σ_{i ≤ min(b, c)} C(n, i) / 2ⁿ) (two-sided; Q. McNemar, Psychometrika 1947;
//    the exact binomial form as in A. Agresti, "Categorical Data Analysis", §10.1);
//  * the paired t test on per-seed differences d_s = metric(A, s) − metric(B, s):
//    t = mean(d) / (sd(d)/√n), n − 1 degrees of freedom, two-sided p from Student's t;
//  * a percentile bootstrap interval for the mean difference of per-example scores that resamples
//    both seeds and examples (two levels), so that it carries the seed-to-seed and the test-set
//    sampling variability; the examples drawn are the same for A and B (paired).
#include <cstdint>
#include <vector>

namespace cpm {

// Discordant counts of two classifiers' per-example correctness.
struct McNemarCounts {
  long long a_only = 0;  // b: A correct, B wrong
  long long b_only = 0;  // c: A wrong, B correct
};
McNemarCounts mcnemar_counts(const std::vector<bool>& a_correct,
                             const std::vector<bool>& b_correct);

// Two-sided exact McNemar p-value for discordant counts (b, c); 1 when b = c.
double mcnemar_exact_p(long long b, long long c);

struct PairedTTest {
  int n = 0;
  double mean = 0.0;  // mean difference
  double sd = 0.0;    // sample standard deviation of the differences (n − 1)
  double t = 0.0;     // mean / (sd/√n); ±inf when sd = 0 and mean ≠ 0, 0 when both vanish
  double p = 1.0;     // two-sided, Student's t with n − 1 degrees of freedom
};
// Needs n ≥ 2 differences (std::invalid_argument otherwise).
PairedTTest paired_t_test(const std::vector<double>& differences);
// The same from the two samples: differences a_s − b_s.
PairedTTest paired_t_test(const std::vector<double>& a, const std::vector<double>& b);

struct Interval {
  double lower = 0.0, upper = 0.0;
};
// Percentile interval at `level` (e.g. 0.95) of the mean of per-example differences
// differences[s][i] (seed s, example i): each of `samples` resamples draws the seeds with
// replacement and, inside each drawn seed, its examples with replacement, and averages. Seeds may
// have different example counts. The resamples come from RandomPurpose::bootstrap keyed by `seed`.
Interval two_level_bootstrap_interval(const std::vector<std::vector<double>>& differences,
                                      int samples, double level, std::uint64_t seed);

}  // namespace cpm

#pragma once
// The tables and figure of `cpm features` from its records (feature_study.hpp):
//   summary.csv    per method, d and N: mean and standard error over the seeds of each error, the
//                  generation time, and the Frobenius error's ratio to i.i.d. features; the
//                  coulomb row is the setting chosen on the selection points, never the reported
//                  ones (lowest mean selection Frobenius error at that d and N);
//   rates.csv      the fitted slope of log(Frobenius error) against log N per method and d, with
//                  its bootstrap interval over seeds (experiments/studies/rate_fit.hpp);
//   summary.md     the same as tables to read, with the coulomb settings chosen;
//   features.h5    the numeric tables (approximation, summary, rates) and the study's parameters;
//   approximation.png  Frobenius error against N, log–log, one panel per d, with the N^{−1/2} line.
#include <string>
#include <vector>

#include "config/features_config.hpp"
#include "experiments/frequencies/feature_study.hpp"

namespace cpm {

// "s=-1", "log" (s = 0) for a coulomb record; "" for the other methods.
std::string setting_name(const ApproximationRecord& record);

struct MeanError {
  double mean = 0.0, error = 0.0;  // the mean and its standard error over the seeds
};

struct FeatureSummaryRow {
  FeatureMethod method = FeatureMethod::iid;
  std::string setting;  // coulomb: the chosen setting
  int dim = 0;
  long n = 0;
  int runs = 0;
  MeanError frobenius, max_entry, spectral, energy_distance, seconds;
  double ratio_to_iid = 0.0;  // mean Frobenius error over that of iid (NaN without iid)
};

// One row per configured method, d and N (in the configuration's order).
std::vector<FeatureSummaryRow> summarise_features(const FeaturesStudyConfig& config,
                                                  const std::vector<ApproximationRecord>& records);

void write_feature_report(const FeaturesStudyConfig& config,
                          const std::vector<ApproximationRecord>& records);

}  // namespace cpm

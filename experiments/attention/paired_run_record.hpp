#pragma once
// An arm of the paired protocol as numbers, and back: what a stopped paired experiment keeps of
// its finished arms (experiments/studies/replica_checkpoint.hpp holds the numbers exactly) so that
// a restart writes the tables an uninterrupted experiment writes. The digest's 64 bits travel as
// two 32-bit halves, counts first, then each Phase A head and each condition's metrics and
// per-example predictions.
#include <string>
#include <vector>

#include "experiments/attention/paired_report.hpp"

namespace cpm {

// Appends the arm's numbers to `values`.
void append_arm_values(const ArmResult& arm, std::vector<double>& values);

// Reads one arm from values[at...] (advancing `at`): its name and condition names are not kept
// (`arm_name`, `conditions`). InputError naming `source` when the numbers do not form an arm.
ArmResult read_arm_values(const std::vector<double>& values, std::size_t& at,
                          const std::string& arm_name, const std::vector<std::string>& conditions,
                          const std::string& source);

}  // namespace cpm

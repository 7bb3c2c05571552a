#pragma once
// A finished run of `cpm kernel` as the replica checkpoint keeps it (a row of any length,
// experiments/studies/replica_checkpoint.hpp): every field of KernelRunResult as doubles, exactly,
// so that a restarted study writes the tables of an uninterrupted one.
#include <vector>

#include "experiments/kernel/kernel_study.hpp"

namespace cpm {

std::vector<double> kernel_run_record(const KernelRunResult& run);

// The run a record holds; std::invalid_argument for values that are not a record.
KernelRunResult kernel_run_from_record(const std::vector<double>& record);

}  // namespace cpm

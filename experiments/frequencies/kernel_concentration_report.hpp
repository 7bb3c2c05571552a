#pragma once
// The tables and figures of the kernel-concentration study (kernel_concentration.hpp), in the
// output folder:
//   kernel_errors.csv   every replica's relative Frobenius error (ensemble, n, replica);
//   kernel_tails.csv    per ensemble, N and δ: P(f > δ), its Wilson band, the rates at speed N
//                       and N², McDiarmid's bound (i.i.d.);
//   kernel_speeds.csv   per ensemble and δ: the slope of log(−log P) against log N, its interval;
//   kernel_concentration.h5  the numeric tables and the study's parameters (ensemble labels);
//   kernel_tails.png    P(f > δ) against δ, one panel per ensemble, a curve per N (and the
//                       bound, dashed);
//   kernel_speed.png    −log P(f > δ) against N, log–log, with the speeds N and N² as lines.
#include "config/features_config.hpp"
#include "experiments/frequencies/kernel_concentration.hpp"

namespace cpm {

void write_kernel_concentration_report(const KernelConcentrationConfig& config,
                                       const KernelConcentrationResult& result);

}  // namespace cpm

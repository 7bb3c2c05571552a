#pragma once
// What a run with dynamics.integrator = "minimize" writes besides its one frame: the convergence
// history minimization.csv (one row per iteration: energy, projected-gradient norm, step, active
// constraints, work), its figure minimization.png, and the outcome appended to run_info.txt.
#include <string>

#include "solvers/minimizer_integrator.hpp"

namespace cpm {

// Writes the table and the run_info.txt lines into `directory` (ending in '/'); returns the
// one-line summary "iterations=… energy=… gradient_norm=…".
std::string write_minimization_report(const MinimizerIntegrator& minimizer,
                                      const std::string& directory);
// Draws minimization.png from the table (a warning if gnuplot cannot).
void draw_minimization_figure(const std::string& directory);

}  // namespace cpm

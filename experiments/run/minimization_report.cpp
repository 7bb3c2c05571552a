#include "experiments/run/minimization_report.hpp"

#include <fstream>

#include "io/csv_table.hpp"
#include "io/number_format.hpp"
#include "viz/plot.hpp"

namespace cpm {

std::string write_minimization_report(const MinimizerIntegrator& minimizer,
                                      const std::string& directory) {
  CsvTable table(directory + "minimization.csv",
                 {"iteration", "energy", "gradient_norm", "step", "active_constraints",
                  "force_evaluations", "hessian_products", "linear_iterations"});
  for (const MinimizerProgress& p : minimizer.history())
    table.add_row({static_cast<double>(p.iteration), p.energy, p.gradient_norm, p.step,
                   static_cast<double>(p.active), static_cast<double>(p.force_evaluations),
                   static_cast<double>(p.hessian_products),
                   static_cast<double>(p.linear_iterations)});
  const MinimizationResult& r = minimizer.result();
  std::ofstream(directory + "run_info.txt", std::ios::app)
      << "minimizer_iterations = " << r.iterations
      << "\nminimizer_energy = " << format_number(r.energy, 16)
      << "\nminimizer_gradient_norm = " << format_number(r.gradient_norm)
      << "\nminimizer_force_evaluations = " << r.force_evaluations
      << "\nminimizer_hessian_products = " << r.hessian_products << '\n';
  return "iterations=" + std::to_string(r.iterations) + " energy=" + format_number(r.energy) +
         " gradient_norm=" + format_number(r.gradient_norm);
}

void draw_minimization_figure(const std::string& directory) {
  draw_figure({directory + "minimization.png",
               "energy minimisation: projected-gradient norm",
               {table_panel(directory + "minimization.csv", "iteration", {"gradient_norm"},
                            "gradient norm", true)}});
}

}  // namespace cpm

#pragma once
// PNG plots of time series from a CSV table, rendered headless by gnuplot (pngcairo when the
// installed gnuplot has it, png otherwise). The gnuplot script is kept next to the image
// (<name>.gp), so a plot can be restyled and redone by hand: `gnuplot <name>.gp`.
#include <string>
#include <vector>

namespace cpm {

struct TimeSeriesPlot {
  std::string csv;  // a table with a header line (io/csv_table.hpp)
  std::string png;  // the image to write
  std::string x_column = "time";
  std::vector<std::string> y_columns;  // one line per column, named in the key
  bool log_y = false;                  // e.g. for distances; non-positive values are left out
  std::string title;
  std::string y_label;
  bool log_x = false;  // e.g. for particle numbers
};

// Throws std::invalid_argument naming the table and column when a column is missing, and
// std::runtime_error with a one-line reason when gnuplot is not installed or fails.
void plot_time_series(const TimeSeriesPlot& plot);

}  // namespace cpm

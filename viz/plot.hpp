#pragma once
// Every figure cpm draws: panels of curves (lines, points, error bars, fitted lines, reference
// levels) or of bars with error bars, rendered headless by gnuplot (pngcairo where the installed
// gnuplot has it, png otherwise). The data (<name>.dat) and the script (<name>.gp) are kept beside
// the image, so a figure can be restyled and redone by hand: `gnuplot <name>.gp`.
//
// One policy for every command: figures are drawn after the tables they show are written, and a
// figure that cannot be drawn (no gnuplot, a gnuplot error) is a one-line warning on standard
// error, never a failure of the command.
#include <string>
#include <vector>

namespace cpm {

struct Curve {
  // steps: a histogram, x holding the bin centres of equal-width bins.
  // dashed_points: lines_points with a dashed line and open points (a second family of curves).
  enum class Style { lines_points, dashed_points, points, line, dashed, dotted, steps };
  std::string title;  // the key entry; empty: none
  std::vector<double> x, y;
  std::vector<double> error;  // ± error bars on y; empty: none
  Style style = Style::lines_points;
  // Curves of one quantity share a colour (its measurement, fit and reference level); index into
  // the palette, by default the curve's position in its panel.
  int colour = -1;
};

struct Panel {
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;  // non-positive values are left out on a log axis
  std::vector<Curve> curves;
  // A bar chart instead: one group of bars per category, one bar per curve, curve.y (and
  // curve.error) holding one value per category.
  std::vector<std::string> categories;
};

struct Figure {
  std::string png;  // the image; <stem>.dat and <stem>.gp are written beside it
  std::string title;
  std::vector<Panel> panels;
  int columns = 0;  // panels per row; 0: all in one row up to three, then rows of three
};

// Draws the figure; returns false after a warning "cpm: warning: <png> not drawn: <reason>".
// Throws std::invalid_argument for a figure that is malformed (curves of unequal lengths).
bool draw_figure(const Figure& figure);

// The named columns of a CSV table with a header line (io/csv_table.hpp), as numbers; throws
// std::invalid_argument naming the table and a missing column.
std::vector<std::vector<double>> read_table_columns(const std::string& csv,
                                                    const std::vector<std::string>& names);

// One panel of `columns` against `x_column` of a CSV table, a curve per column.
Panel table_panel(const std::string& csv, const std::string& x_column,
                  const std::vector<std::string>& columns, const std::string& y_label, bool log_y);

}  // namespace cpm

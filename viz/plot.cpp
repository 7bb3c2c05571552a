#include "viz/plot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace cpm {

namespace {

namespace fs = std::filesystem;

// Distinct colours that stay apart in print and for common colour-vision deficiencies.
const char* const kPalette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                "#e69f00", "#56b4e9", "#000000", "#f0e442"};

// A gnuplot single-quoted string literal ('' stands for ').
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string find_gnuplot() {
  const char* path = std::getenv("PATH");
  std::istringstream directories(path ? path : "");
  for (std::string directory; std::getline(directories, directory, ':');) {
    const fs::path candidate = fs::path(directory.empty() ? "." : directory) / "gnuplot";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  throw std::runtime_error("gnuplot not found on PATH (install gnuplot-nox)");
}

// Runs gnuplot on `script`; returns its exit status and its stderr in `messages`.
int run_gnuplot(const std::string& gnuplot, const std::string& script, std::string& messages) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("cannot create a pipe for gnuplot");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::string program = gnuplot, argument = script;
  char* argv[] = {program.data(), argument.data(), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    throw std::runtime_error(gnuplot + " cannot be started");
  }
  char buffer[4096];
  for (ssize_t got; (got = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
    messages.append(buffer, static_cast<std::size_t>(got));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The last non-empty line of gnuplot's messages: the error itself.
std::string last_line(const std::string& text) {
  std::istringstream lines(text);
  std::string last;
  for (std::string line; std::getline(lines, line);)
    if (line.find_first_not_of(" \t^") != std::string::npos) last = line;
  return last;
}

// A value for the data file: NaN (left out by gnuplot) where a log axis cannot show it.
std::string value(double v, bool log_axis) {
  if (!std::isfinite(v) || (log_axis && v <= 0.0)) return "NaN";
  std::ostringstream o;
  o.precision(10);
  o << v;
  return o.str();
}

std::string style_of(const Curve& c) {
  const bool bars = !c.error.empty();
  switch (c.style) {
    case Curve::Style::lines_points:
      return bars ? "yerrorlines lw 2 pt 7 ps 0.8" : "linespoints lw 2 pt 7 ps 0.8";
    case Curve::Style::dashed_points:
      return bars ? "yerrorlines lw 2 dt 2 pt 6 ps 0.8" : "linespoints lw 2 dt 2 pt 6 ps 0.8";
    case Curve::Style::points:
      return bars ? "yerrorbars pt 7 ps 0.8" : "points pt 7 ps 0.8";
    case Curve::Style::line:
      return "lines lw 2";
    case Curve::Style::dashed:
      return "lines lw 2 dt 2";
    case Curve::Style::dotted:
      return "lines lw 2 dt 3";
    case Curve::Style::steps:
      return "histeps lw 2";
  }
  return "lines";
}

void check(const Figure& f) {
  for (const Panel& p : f.panels)
    for (const Curve& c : p.curves) {
      const std::size_t n = p.categories.empty() ? c.x.size() : p.categories.size();
      if (c.y.size() != n || (!c.error.empty() && c.error.size() != n))
        throw std::invalid_argument(f.png + ": curve '" + c.title + "' has " +
                                    std::to_string(c.y.size()) + " values for " +
                                    std::to_string(n) + " positions");
    }
}

// Data blocks: one per curve of a line panel, one per bar panel (category, y₁, e₁, y₂, e₂, …).
std::string data_for(const Figure& f) {
  std::ostringstream d;
  for (const Panel& p : f.panels) {
    if (!p.categories.empty()) {
      for (std::size_t i = 0; i < p.categories.size(); ++i) {
        d << '"' << p.categories[i] << '"';
        for (const Curve& c : p.curves)
          d << ' ' << value(c.y[i], p.log_y) << ' '
            << (c.error.empty() ? "0" : value(c.error[i], false));
        d << '\n';
      }
      d << "\n\n";
      continue;
    }
    for (const Curve& c : p.curves) {
      d << "# " << c.title << '\n';
      for (std::size_t i = 0; i < c.x.size(); ++i) {
        d << value(c.x[i], p.log_x) << ' ' << value(c.y[i], p.log_y);
        if (!c.error.empty()) d << ' ' << value(c.error[i], false);
        d << '\n';
      }
      d << "\n\n";
    }
  }
  return d.str();
}

std::string script_for(const Figure& f, const std::string& data_file, int columns, int rows) {
  const bool single = f.panels.size() == 1;
  const int width = single ? 960 : 560 * columns, height = single ? 640 : 440 * rows;
  std::ostringstream s;
  s << "# " << f.title << " (written by cpm; redo with: gnuplot "
    << fs::path(f.png).replace_extension(".gp").string() << ")\n"
    << "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
    << "  set terminal pngcairo size " << width << "," << height << " noenhanced font 'sans,10'\n"
    << "} else {\n"
    << "  set terminal png size " << width << "," << height << " noenhanced\n"
    << "}\n"
    << "set output " << quoted(f.png) << "\n";
  if (!single)
    s << "set multiplot layout " << rows << "," << columns << " title " << quoted(f.title) << "\n";
  int block = 0;
  for (const Panel& p : f.panels) {
    // Panels share the settings of the one before: undo what a panel may have set.
    s << "unset logscale\nset format '% h'\nset xtics norotate autofreq\nset autoscale\n"
      << "set style fill empty\nset grid\nset key top right\n"
      << "set title "
      << quoted(single && !f.title.empty() ? f.title + (p.title.empty() ? "" : ": " + p.title)
                                           : p.title)
      << "\n"
      << "set xlabel " << quoted(p.x_label) << "\nset ylabel " << quoted(p.y_label) << "\n";
    if (p.log_x) s << "set logscale x\nset format x '%g'\n";
    if (p.log_y) s << "set logscale y\nset format y '%g'\n";
    if (!p.categories.empty()) {
      s << "set style data histogram\nset style histogram errorbars gap 1 lw 1\n"
        << "set style fill solid 0.7 border -1\nset xtics rotate by -30\n"
        << (p.log_y ? "" : "set yrange [0:*]\n") << "plot ";
      for (std::size_t i = 0; i < p.curves.size(); ++i) {
        const Curve& c = p.curves[i];
        const int colour = c.colour >= 0 ? c.colour : static_cast<int>(i);
        s << (i ? ", \\\n     " : "") << quoted(data_file) << " index " << block << " using "
          << 2 + 2 * i << ":" << 3 + 2 * i << (i ? "" : ":xtic(1)") << " title " << quoted(c.title)
          << " lc rgb '" << kPalette[colour % 8] << "'";
      }
      s << "\n";
      ++block;
      continue;
    }
    s << "plot ";
    for (std::size_t i = 0; i < p.curves.size(); ++i, ++block) {
      const Curve& c = p.curves[i];
      const int colour = c.colour >= 0 ? c.colour : static_cast<int>(i);
      s << (i ? ", \\\n     " : "") << quoted(data_file) << " index " << block << " using "
        << (c.error.empty() ? "1:2" : "1:2:3") << " with " << style_of(c) << " lc rgb '"
        << kPalette[colour % 8] << "' "
        << (c.title.empty() ? "notitle" : "title " + quoted(c.title));
    }
    if (p.curves.empty()) s << "NaN notitle";
    s << "\n";
  }
  if (!single) s << "unset multiplot\n";
  return s.str();
}

}  // namespace

bool draw_figure(const Figure& figure) {
  check(figure);
  const int n = static_cast<int>(figure.panels.size());
  const int columns = figure.columns > 0 ? figure.columns : std::min(std::max(n, 1), 3);
  const int rows = std::max(1, (n + columns - 1) / columns);
  const fs::path png(figure.png);
  const std::string data = fs::path(png).replace_extension(".dat").string();
  const std::string script = fs::path(png).replace_extension(".gp").string();
  try {
    std::ofstream(data) << data_for(figure);
    {
      std::ofstream out(script);
      out << script_for(figure, data, columns, rows);
      if (!out) throw std::runtime_error("cannot write " + script);
    }
    const std::string gnuplot = find_gnuplot();
    std::error_code ignored;
    fs::remove(png, ignored);
    std::string messages;
    const int status = run_gnuplot(gnuplot, script, messages);
    if (status != 0 || !fs::exists(png) || fs::file_size(png, ignored) == 0)
      throw std::runtime_error("gnuplot failed on " + script + ": " + last_line(messages));
    return true;
  } catch (const std::runtime_error& e) {
    std::cerr << "cpm: warning: " << figure.png << " not drawn: " << e.what() << '\n';
    return false;
  }
}

std::vector<std::vector<double>> read_table_columns(const std::string& csv,
                                                    const std::vector<std::string>& names) {
  std::ifstream in(csv);
  std::string line;
  if (!in || !std::getline(in, line))
    throw std::invalid_argument(csv + ": cannot read the table's header");
  std::vector<std::string> header;
  std::istringstream fields(line);
  for (std::string name; std::getline(fields, name, ',');) header.push_back(name);
  std::vector<std::size_t> index;
  for (const auto& name : names) {
    std::size_t i = 0;
    while (i < header.size() && header[i] != name) ++i;
    if (i == header.size()) throw std::invalid_argument(csv + ": no column '" + name + "'");
    index.push_back(i);
  }
  std::vector<std::vector<double>> columns(names.size());
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');)
      row.push_back(cell.empty() ? std::nan("") : std::strtod(cell.c_str(), nullptr));
    for (std::size_t k = 0; k < index.size(); ++k)
      columns[k].push_back(index[k] < row.size() ? row[index[k]] : std::nan(""));
  }
  return columns;
}

Panel table_panel(const std::string& csv, const std::string& x_column,
                  const std::vector<std::string>& columns, const std::string& y_label, bool log_y) {
  std::vector<std::string> names = {x_column};
  names.insert(names.end(), columns.begin(), columns.end());
  const auto values = read_table_columns(csv, names);
  Panel p;
  p.x_label = x_column;
  p.y_label = y_label;
  p.log_y = log_y;
  for (std::size_t k = 0; k < columns.size(); ++k)
    p.curves.push_back({columns[k], values[0], values[k + 1], {}, Curve::Style::lines_points, -1});
  return p;
}

}  // namespace cpm

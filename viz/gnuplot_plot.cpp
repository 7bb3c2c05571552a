#include "viz/gnuplot_plot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace cpm {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> header_of(const std::string& csv) {
  std::ifstream in(csv);
  std::string line;
  if (!in || !std::getline(in, line))
    throw std::invalid_argument(csv + ": cannot read the table's header");
  std::vector<std::string> columns;
  std::istringstream fields(line);
  for (std::string name; std::getline(fields, name, ',');) columns.push_back(name);
  return columns;
}

// 1-based column number of `name`, as gnuplot counts.
int column_number(const std::vector<std::string>& header, const std::string& name,
                  const std::string& csv) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i) + 1;
  throw std::invalid_argument(csv + ": no column '" + name + "' to plot");
}

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
  throw std::runtime_error(
      "gnuplot not found on PATH: install gnuplot-nox (scripts/install-deps.sh) for PNG plots");
}

std::string script_path(const TimeSeriesPlot& plot) {
  return fs::path(plot.png).replace_extension(".gp").string();
}

std::string script_for(const TimeSeriesPlot& plot, const std::vector<std::string>& header) {
  const int x = column_number(header, plot.x_column, plot.csv);
  std::ostringstream s;
  s << "# " << plot.title << " (written by cpm; redo with: gnuplot " << script_path(plot) << ")\n"
    << "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
    << "  set terminal pngcairo size 960,640 noenhanced\n"
    << "} else {\n"
    << "  set terminal png size 960,640 noenhanced\n"
    << "}\n"
    << "set output " << quoted(plot.png) << "\n"
    << "set datafile separator ','\n"
    << "set title " << quoted(plot.title) << "\n"
    << "set xlabel " << quoted(plot.x_column) << "\n"
    << "set ylabel " << quoted(plot.y_label) << "\n"
    << "set grid\n"
    << "set key outside right top\n";
  if (plot.log_y) s << "set logscale y\nset format y '%g'\n";
  if (plot.log_x) s << "set logscale x\nset format x '%g'\n";
  s << "plot";
  for (std::size_t i = 0; i < plot.y_columns.size(); ++i) {
    const int y = column_number(header, plot.y_columns[i], plot.csv);
    const std::string value = "column(" + std::to_string(y) + ")";
    s << (i ? ", \\\n    " : " ") << quoted(plot.csv) << " using (column(" << x << ")):("
      << (plot.log_y ? "(" + value + " > 0 ? " + value + " : NaN)" : value) << ") skip 1"
      << " with linespoints title " << quoted(plot.y_columns[i]);
  }
  s << "\n";
  return s.str();
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
    throw std::runtime_error(gnuplot + ": cannot be started");
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

}  // namespace

void plot_time_series(const TimeSeriesPlot& plot) {
  if (plot.y_columns.empty()) throw std::invalid_argument(plot.png + ": no columns to plot");
  const std::string script_text = script_for(plot, header_of(plot.csv));
  const std::string gnuplot = find_gnuplot();
  const std::string script = script_path(plot);
  {
    std::ofstream out(script);
    out << script_text;
    if (!out) throw std::runtime_error(script + ": cannot write the gnuplot script");
  }
  std::error_code ignored;
  fs::remove(plot.png, ignored);
  std::string messages;
  const int status = run_gnuplot(gnuplot, script, messages);
  if (status != 0 || !fs::exists(plot.png) || fs::file_size(plot.png, ignored) == 0)
    throw std::runtime_error("gnuplot failed on " + script + ": " + last_line(messages));
}

}  // namespace cpm

#pragma once
// Progress of a long run on stderr: a self-overwriting line on a terminal, a line every 10%
// otherwise (logs, CI); between those, a heartbeat every few seconds from inside long steps.
#include <chrono>
#include <string>

namespace cpm {

class Progress {
 public:
  Progress(std::string label, double total, bool enabled = true);
  // Reports that `done` of `total` is finished; `detail` is appended (e.g. "W1=0.012").
  void update(double done, const std::string& detail = "");
  void finish(const std::string& detail = "");
  // Ends the progress line without "done" (a stopped run): a line break on a terminal.
  void interrupt();

  // Whether a heartbeat is due: kHeartbeatSeconds since the last line. Cheap (one clock read), so
  // a caller polls it every step and builds its detail only when it holds.
  bool heartbeat_due() const;
  // A line (the same line on a terminal) with `detail`, e.g. the model time, step size and steps
  // taken inside an output interval that takes long; the percentage stays at `done`.
  void heartbeat(double done, const std::string& detail);
  static constexpr double kHeartbeatSeconds = 3.0;

 private:
  std::string label_;
  double total_;
  bool enabled_, terminal_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_print_;
};

}  // namespace cpm

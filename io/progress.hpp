#pragma once
// Progress of a long run on stderr: a self-overwriting line on a terminal, a line every 10%
// otherwise (logs, CI).
#include <chrono>
#include <string>

namespace cpm {

class Progress {
 public:
  Progress(std::string label, double total, bool enabled = true);
  // Reports that `done` of `total` is finished; `detail` is appended (e.g. "W1=0.012").
  void update(double done, const std::string& detail = "");
  void finish(const std::string& detail = "");

 private:
  std::string label_;
  double total_;
  bool enabled_, terminal_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_print_;
};

}  // namespace cpm

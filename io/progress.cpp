#include "io/progress.hpp"

#include <unistd.h>
#include <cstdio>

namespace cpm {

Progress::Progress(std::string label, double total, bool enabled)
    : label_(std::move(label)),
      total_(total > 0 ? total : 1.0),
      enabled_(enabled),
      terminal_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

void Progress::update(double done, const std::string& detail) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double fraction = done / total_;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double remaining = fraction > 0 ? elapsed * (1.0 - fraction) / fraction : 0.0;
  if (terminal_) {
    if (now - last_print_ < std::chrono::milliseconds(200) && fraction < 1.0) return;
    last_print_ = now;
    std::fprintf(stderr, "\r%s %5.1f%%  %.1fs elapsed, ~%.1fs left  %s\033[K", label_.c_str(),
                 100.0 * fraction, elapsed, remaining, detail.c_str());
  } else {
    const int decile = static_cast<int>(10.0 * fraction);
    if (decile <= last_decile_) return;
    last_decile_ = decile;
    last_print_ = now;
    std::fprintf(stderr, "%s %3d%%  %.1fs elapsed  %s\n", label_.c_str(), 10 * decile, elapsed,
                 detail.c_str());
  }
  std::fflush(stderr);
}

bool Progress::heartbeat_due() const {
  return enabled_ &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - last_print_).count() >=
             kHeartbeatSeconds;
}

void Progress::heartbeat(double done, const std::string& detail) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  last_print_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::fprintf(stderr, "%s%s %5.1f%%  %.1fs elapsed  %s%s", terminal_ ? "\r" : "", label_.c_str(),
               100.0 * done / total_, elapsed, detail.c_str(), terminal_ ? "\033[K" : "\n");
  std::fflush(stderr);
}

void Progress::finish(const std::string& detail) {
  if (!enabled_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "%s%s done in %.1fs  %s\n", terminal_ ? "\r" : "", label_.c_str(), elapsed,
               detail.c_str());
  if (terminal_) std::fprintf(stderr, "\033[K");
}

void Progress::interrupt() {
  if (enabled_ && terminal_) std::fprintf(stderr, "\n");
}

}  // namespace cpm

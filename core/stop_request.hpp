#pragma once
// A clean stop on SIGINT or SIGTERM (what a batch scheduler sends before its time limit). While a
// StopRequestHandler lives, the first of those signals only sets a flag that long loops poll with
// stop_signal(); the loop finishes what it is doing, saves what it needs and throws StopRequested,
// which the command line turns into one line and exit code 128 + signal. A second signal restores
// the default action and re-raises it: the process stops at once. Handlers nest: an inner one (a
// training run inside an experiment) changes nothing, and the flag clears when the outer one ends.
#include <stdexcept>
#include <string>

namespace cpm {

class StopRequestHandler {
 public:
  StopRequestHandler();   // installs the handlers and clears the flag
  ~StopRequestHandler();  // restores the previous handlers
  StopRequestHandler(const StopRequestHandler&) = delete;
  StopRequestHandler& operator=(const StopRequestHandler&) = delete;
};

// 0, or the signal received since the handler was installed.
int stop_signal();

// Throws StopRequested with an empty hint if a signal arrived: for the loops of the library (a
// minimiser, a gas of features) whose caller knows how to continue and rethrows with that hint.
void stop_if_requested();

class StopRequested : public std::runtime_error {
 public:
  // `how_to_continue` completes "stopped by SIGTERM at …; ".
  StopRequested(int signal, const std::string& how_to_continue);
  int signal() const { return signal_; }
  int exit_code() const { return 128 + signal_; }

 private:
  int signal_;
};

}  // namespace cpm

#include "core/stop_request.hpp"

#include <csignal>
#include <cstring>

namespace cpm {

namespace {

volatile std::sig_atomic_t received = 0;
int depth = 0;  // handlers alive; only the outermost installs and restores
struct sigaction previous_int, previous_term;

extern "C" void on_stop_signal(int signal) {
  if (received != 0) {  // the second signal: the default action, now
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  received = signal;
}

void install(int signal, struct sigaction* previous) {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, previous);
}

}  // namespace

StopRequestHandler::StopRequestHandler() {
  if (depth++ > 0) return;
  received = 0;
  install(SIGINT, &previous_int);
  install(SIGTERM, &previous_term);
}

StopRequestHandler::~StopRequestHandler() {
  if (--depth > 0) return;
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);
  received = 0;
}

int stop_signal() {
  return received;
}

void stop_if_requested() {
  if (const int signal = stop_signal()) throw StopRequested(signal, "");
}

StopRequested::StopRequested(int signal, const std::string& how_to_continue)
    : std::runtime_error(std::string("stopped by ") + (signal == SIGINT ? "SIGINT" : "SIGTERM") +
                         "; " + how_to_continue),
      signal_(signal) {}

}  // namespace cpm

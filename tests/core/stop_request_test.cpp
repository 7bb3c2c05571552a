// The stop flag of core/stop_request.hpp: set by SIGTERM while a handler lives, kept through a
// nested handler, cleared when the outermost ends, which also gives the signal its old action.
#include "core/stop_request.hpp"

#include <gtest/gtest.h>

#include <csignal>

namespace cpm {
namespace {

extern "C" void ignore_signal(int) {}

TEST(StopRequest, NestedHandlersKeepTheFlagUntilTheOutermostEnds) {
  struct sigaction own {
  }, seen{};
  own.sa_handler = ignore_signal;
  sigemptyset(&own.sa_mask);
  struct sigaction before {};
  sigaction(SIGTERM, &own, &before);
  {
    const StopRequestHandler outer;
    EXPECT_EQ(stop_signal(), 0);
    EXPECT_NO_THROW(stop_if_requested());
    {
      const StopRequestHandler inner;  // an experiment's run: changes nothing
      std::raise(SIGTERM);
      EXPECT_EQ(stop_signal(), SIGTERM);
    }
    EXPECT_EQ(stop_signal(), SIGTERM);
    try {
      stop_if_requested();
      ADD_FAILURE() << "no StopRequested";
    } catch (const StopRequested& e) {
      EXPECT_EQ(e.exit_code(), 128 + SIGTERM);
    }
  }
  EXPECT_EQ(stop_signal(), 0);
  sigaction(SIGTERM, nullptr, &seen);
  EXPECT_EQ(seen.sa_handler, &ignore_signal);
  std::raise(SIGTERM);  // the old action again: ignored, and no flag
  EXPECT_EQ(stop_signal(), 0);
  sigaction(SIGTERM, &before, nullptr);
}

}  // namespace
}  // namespace cpm

// SPDX-License-Identifier: Apache-2.0
//
// A bounded wait for unit tests whose failure mode is a thread stuck for
// ever (a deadlock in a pool, a lost wake-up): the test fails and the
// process ends, since a stuck thread cannot be taken back.
#ifndef OFFLOADIO_TEST_BOUNDEDWAIT_H
#define OFFLOADIO_TEST_BOUNDEDWAIT_H

#include "gtest/gtest.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>

namespace offloadio {
namespace unittest {

/// The result of \p Fut, or a failed test and the end of the process if it
/// does not come within \p Seconds.
template <typename T>
T within(std::future<T> &Fut, const char *What, int Seconds = 10) {
  if (Fut.wait_for(std::chrono::seconds(Seconds)) !=
      std::future_status::ready) {
    ADD_FAILURE() << What << ": still waiting after " << Seconds
                  << " s (deadlock?)";
    std::fflush(nullptr);
    std::abort();
  }
  return Fut.get();
}

} // namespace unittest
} // namespace offloadio

#endif // OFFLOADIO_TEST_BOUNDEDWAIT_H

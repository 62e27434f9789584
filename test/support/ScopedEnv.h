// SPDX-License-Identifier: Apache-2.0
//
// Test helper for the settings structures: owns a set of environment
// variables for one test. They start unset (with the report markers of
// offloadio::reportInvalidEnv, so that every invalid value is reported
// again) and get their outer values back afterwards, so that no test sees
// another's settings or the caller's shell.
#ifndef OFFLOADIO_TEST_SCOPEDENV_H
#define OFFLOADIO_TEST_SCOPEDENV_H

#include "offloadio/Envar.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace offloadio {
namespace test {

/// Unsets the given variables and their report markers while it lives.
class ScopedEnvTy {
public:
  /// Take over \p Names (and their markers), unset.
  explicit ScopedEnvTy(std::initializer_list<const char *> Names) {
    for (const char *Name : Names) {
      save(Name);
      save(reportedMarkerName(Name));
    }
  }
  ~ScopedEnvTy() {
    for (auto &[Name, Value] : Saved) {
      if (Value)
        setenv(Name.c_str(), Value->c_str(), 1);
      else
        unsetenv(Name.c_str());
    }
  }
  ScopedEnvTy(const ScopedEnvTy &) = delete;
  ScopedEnvTy &operator=(const ScopedEnvTy &) = delete;

  /// Set \p Name to \p Value.
  static void set(const char *Name, const char *Value) {
    ASSERT_EQ(setenv(Name, Value, 1), 0) << Name;
  }

  /// Run \p Fn with stderr captured into \p Stderr; returns what \p Fn
  /// returns.
  template <typename FnTy> static auto captured(FnTy Fn, std::string &Stderr) {
    ::testing::internal::CaptureStderr();
    auto Result = Fn();
    Stderr = ::testing::internal::GetCapturedStderr();
    return Result;
  }

private:
  void save(const std::string &Name) {
    const char *Value = getenv(Name.c_str());
    Saved.emplace_back(Name, Value ? std::optional<std::string>(Value)
                                   : std::nullopt);
    unsetenv(Name.c_str());
  }

  std::vector<std::pair<std::string, std::optional<std::string>>> Saved;
};

/// Whether \p Text contains \p Needle, saying what it holds when not.
inline ::testing::AssertionResult contains(const std::string &Text,
                                           const std::string &Needle) {
  if (Text.find(Needle) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << Text << "' does not contain '" << Needle << "'";
}

} // namespace test
} // namespace offloadio

#endif // OFFLOADIO_TEST_SCOPEDENV_H

// SPDX-License-Identifier: Apache-2.0
//
// What the fuzzers share: a check that aborts with a message (libFuzzer
// then saves the input as a crash), an error-code helper, and a capture of
// what a call prints on stderr.
#ifndef OFFLOADIO_TEST_FUZZ_FUZZCHECK_H
#define OFFLOADIO_TEST_FUZZ_FUZZCHECK_H

#include "offloadio/Error.h"

#include "llvm/Support/FormatVariadic.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

namespace offloadio {
namespace test {

/// Report a mismatch between the component and its reference, and abort.
[[noreturn]] inline void fuzzFailure(const char *File, int Line,
                                     const char *Cond,
                                     const std::string &What) {
  std::fprintf(stderr, "%s:%d: check failed: %s\n  %s\n", File, Line, Cond,
               What.c_str());
  std::abort();
}

/// The code of \p Err (Success for no error), consuming it.
inline ErrorCode codeOf(Error Err) { return takeErrorCode(std::move(Err)); }

/// Redirects fd 2 into a memfd around one call, so that a check can see
/// exactly what the call printed (stderr is unbuffered, and so is
/// llvm::errs(): all of it is in the memfd when the call returns).
class StderrCaptureTy {
public:
  StderrCaptureTy() : Fd(memfd_create("offloadio-fuzz-stderr", 0)) {}
  ~StderrCaptureTy() {
    if (Fd >= 0)
      close(Fd);
  }
  StderrCaptureTy(const StderrCaptureTy &) = delete;
  StderrCaptureTy &operator=(const StderrCaptureTy &) = delete;

  /// Run \p Fn, store what it printed in \p Text, return its result.
  template <typename FnTy> auto run(FnTy Fn, std::string &Text) {
    Text.clear();
    int Saved = -1;
    // fd 2 will share the memfd's offset: rewind it as well as empty it.
    if (Fd >= 0 && ftruncate(Fd, 0) == 0 && lseek(Fd, 0, SEEK_SET) == 0) {
      Saved = dup(2);
      dup2(Fd, 2);
    }
    auto Result = Fn();
    if (Saved >= 0) {
      dup2(Saved, 2);
      close(Saved);
      char Buf[4096];
      off_t Off = 0;
      for (ssize_t N; (N = pread(Fd, Buf, sizeof(Buf), Off)) > 0; Off += N)
        Text.append(Buf, size_t(N));
    }
    return Result;
  }

  /// Whether output is captured at all (memfd_create may fail).
  bool works() const { return Fd >= 0; }

private:
  int Fd;
};

/// An address next to one of the model's \p Regions, chosen by \p Input:
/// its start, inside it, its end, its last byte, just below it (which may
/// wrap to the top of the address space), or a pointer one of its locks was
/// taken at (where an unlock succeeds); with no region, \p Base plus a small
/// offset. Boundaries are where interval maps go wrong.
template <typename RegionsTy>
uintptr_t pickNearRegion(FuzzedDataProvider &Input, const RegionsTy &Regions,
                         uintptr_t Base) {
  if (Regions.empty())
    return Base + Input.ConsumeIntegral<uint8_t>();
  const auto &R = Regions[Input.ConsumeIntegralInRange<size_t>(
      0, Regions.size() - 1)];
  switch (Input.ConsumeIntegralInRange<unsigned>(0, 5)) {
  case 0:
    return R.Start;
  case 5:
    return R.LockStarts.empty()
               ? R.Start
               : R.LockStarts[Input.ConsumeIntegralInRange<size_t>(
                     0, R.LockStarts.size() - 1)];
  case 1:
    return R.Start +
           Input.ConsumeIntegralInRange<uintptr_t>(0, R.End - R.Start - 1);
  case 2:
    return R.End;
  case 3:
    return R.End - 1;
  default:
    return R.Start - Input.ConsumeIntegralInRange<uintptr_t>(1, 8);
  }
}

} // namespace test
} // namespace offloadio

/// Abort unless \p Cond holds; the message (llvm::formatv arguments) is only
/// formatted on failure, so checks stay cheap on the fuzzing hot path.
#define OFFLOADIO_FUZZ_CHECK(Cond, ...)                                        \
  do {                                                                         \
    if (!(Cond))                                                               \
      ::offloadio::test::fuzzFailure(__FILE__, __LINE__, #Cond,                \
                                     llvm::formatv(__VA_ARGS__).str());        \
  } while (false)

#endif // OFFLOADIO_TEST_FUZZ_FUZZCHECK_H

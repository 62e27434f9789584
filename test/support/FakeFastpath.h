// SPDX-License-Identifier: Apache-2.0
//
// A fake vendor fastpath (IOFastpathTy, offloadio/io/IOFastpath.h) onto the
// in-memory file of FakeSys.h, for the file engine's tests: it serves what
// it accepts, refuses with a reason, or fails reads or writes with a chosen
// errno, and can take its time so that all workers reach it at once.
#ifndef OFFLOADIO_TEST_SUPPORT_FAKEFASTPATH_H
#define OFFLOADIO_TEST_SUPPORT_FAKEFASTPATH_H

#include "FakeSys.h"

#include "offloadio/Error.h"
#include "offloadio/io/IOFastpath.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace offloadio::unittest {

/// A fastpath that reads and writes the file of \p Sys directly, past its
/// system calls: of the faults of Sys only the file size limit applies, and
/// Sys counts none of these calls.
class FakeFastpathTy final : public IOFastpathTy {
public:
  explicit FakeFastpathTy(MemoryFileSysTy &Sys) : Sys(Sys) {}

  bool Accept = true; ///< Whether accepts() says yes ...
  std::string RefuseWhy = "fake: the file is on tmpfs"; ///< ... or why not.
  int ReadErrno = 0;  ///< 0: reads work.
  int WriteErrno = 0; ///< 0: writes work.
  /// Time every call takes: lets all workers reach the fastpath at once.
  std::chrono::milliseconds Delay{0};
  std::atomic<unsigned> Reads{0}, Writes{0};

  const char *name() const override { return "fake"; }
  bool accepts(int, const void *, size_t, off_t, std::string &Why,
               const IOLogTy &) override {
    if (!Accept)
      Why = RefuseWhy;
    return Accept;
  }
  Expected<size_t> read(int Fd, void *DevPtr, size_t Count, off_t Offset,
                        const IOLogTy &) override {
    ++Reads;
    std::this_thread::sleep_for(Delay);
    if (ReadErrno)
      return makeErrnoError(ReadErrno, "fake cuFileRead(fd {0})", Fd);
    return Sys.readAt(static_cast<char *>(DevPtr), Count, size_t(Offset));
  }
  Error write(int Fd, const void *DevPtr, size_t Count, off_t Offset,
              const IOLogTy &) override {
    ++Writes;
    std::this_thread::sleep_for(Delay);
    if (WriteErrno)
      return makeErrnoError(WriteErrno, "fake cuFileWrite(fd {0})", Fd);
    if (size_t(Offset) + Count > Sys.SizeLimit) {
      // Part of it written, the rest refused: the error does not say how
      // much went to the file.
      if (size_t(Offset) < Sys.SizeLimit)
        Sys.writeAt(static_cast<const char *>(DevPtr),
                    Sys.SizeLimit - size_t(Offset), size_t(Offset));
      return makeErrnoError(EFBIG, "fake cuFileWrite(fd {0})", Fd);
    }
    Sys.writeAt(static_cast<const char *>(DevPtr), Count, size_t(Offset));
    return Error::success();
  }

private:
  MemoryFileSysTy &Sys;
};

} // namespace offloadio::unittest

#endif // OFFLOADIO_TEST_SUPPORT_FAKEFASTPATH_H

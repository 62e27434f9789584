// SPDX-License-Identifier: Apache-2.0
//
// captureFd, the duplicate a depend call (libompx_io) makes of the
// program's descriptor: made through the library's syscall seam, so a
// substituted SysTy sees the call; its failures say which call failed on
// which descriptor; the duplicate is closed with its owner.
#include "CapturedFd.h"

#include "gtest/gtest.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ompxio;

namespace {

/// Records the descriptors dup is asked for; fails with FailErrno when it
/// is not 0, else duplicates for real.
class RecordingSysTy : public offloadio::SysTy {
public:
  int dup(int Fd) override {
    Dups.push_back(Fd);
    if (FailErrno) {
      errno = FailErrno;
      return -1;
    }
    return offloadio::SysTy::dup(Fd);
  }

  int FailErrno = 0;
  std::vector<int> Dups;
};

bool isOpen(int Fd) { return ::fcntl(Fd, F_GETFD) >= 0; }

TEST(CapturedFdTest, DuplicatesThroughTheSeamAndClosesWithItsOwner) {
  RecordingSysTy Sys;
  int Program = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(Program, 0);
  int Dup = -1;
  {
    CapturedFdTy File;
    std::string Why;
    ASSERT_EQ(captureFd(Sys, Program, File, Why), 0) << Why;
    EXPECT_EQ(Sys.Dups, std::vector<int>{Program});
    Dup = File.get();
    ASSERT_GE(Dup, 0);
    EXPECT_NE(Dup, Program);
    EXPECT_TRUE(::fcntl(Dup, F_GETFD) & FD_CLOEXEC);
    CapturedFdTy Moved(std::move(File));
    EXPECT_EQ(File.get(), -1);
    EXPECT_EQ(Moved.get(), Dup);
  }
  EXPECT_FALSE(isOpen(Dup)) << "the duplicate outlived its owner";
  EXPECT_TRUE(isOpen(Program));
  ::close(Program);
}

TEST(CapturedFdTest, FailuresNameTheCallAndTheDescriptor) {
  RecordingSysTy Sys;
  CapturedFdTy File;
  std::string Why;
  Sys.FailErrno = EMFILE;
  EXPECT_EQ(captureFd(Sys, 7, File, Why), EMFILE);
  EXPECT_EQ(Why, std::string("fcntl(fd 7, F_DUPFD_CLOEXEC) to capture it for "
                             "the task: ") +
                     std::strerror(EMFILE));
  EXPECT_EQ(File.get(), -1);
  Sys.FailErrno = EBADF;
  EXPECT_EQ(captureFd(Sys, 9, File, Why), EBADF);
  EXPECT_EQ(Why, "fd 9 is not open");
  EXPECT_EQ(Sys.Dups, (std::vector<int>{7, 9}));
}

} // namespace

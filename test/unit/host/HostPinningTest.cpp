// SPDX-License-Identifier: Apache-2.0
//
// The host plugin's pinning: the check that a locked range is mapped
// readable and writable, on real mappings of this process, through
// PROCMAP_QUERY and through the /proc/self/maps scan of older kernels (the
// same refusals, word for word); that the query path asks only about the
// range's own mappings, however many the process has; and that every
// failing system call is reported by name.
#include "HostPinning.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace offloadio;
using namespace offloadio::host;

namespace {

const size_t Page = size_t(sysconf(_SC_PAGESIZE));

std::string hex(uintptr_t Addr) { return llvm::formatv("{0:x}", Addr).str(); }
std::string range(uintptr_t Start, uintptr_t End) {
  return "[" + hex(Start) + ", " + hex(End) + ")";
}

/// Consume an error, returning its code and storing its message.
ErrorCode codeOf(Error Err, std::string *Msg = nullptr) {
  ErrorDetailsTy Details = takeErrorDetails(std::move(Err));
  if (Msg)
    *Msg = Details.Message;
  return Details.Code;
}

/// The real calls, counted; optionally without PROCMAP_QUERY (ENOTTY, as a
/// kernel before 6.11 answers) or with one call failing.
class CountingSysTy : public HostPinningSysTy {
public:
  int open(const char *Path, int Flags) override {
    ++Opens;
    if (FailOpen) {
      errno = FailOpen;
      return -1;
    }
    return HostPinningSysTy::open(Path, Flags);
  }
  ssize_t read(int Fd, void *Buf, size_t Count) override {
    ++Reads;
    if (FailRead) {
      errno = FailRead;
      return -1;
    }
    return HostPinningSysTy::read(Fd, Buf, Count);
  }
  int close(int Fd) override {
    ++Closes;
    return HostPinningSysTy::close(Fd);
  }
  int queryMapping(int Fd, ProcMapQueryTy &Query) override {
    ++Queries;
    if (NoQuery || FailQuery) {
      errno = NoQuery ? ENOTTY : FailQuery;
      return -1;
    }
    return HostPinningSysTy::queryMapping(Fd, Query);
  }
  int mlock(const void *Ptr, size_t Size) override {
    ++Mlocks;
    if (FailMlock) {
      errno = FailMlock;
      return -1;
    }
    return HostPinningSysTy::mlock(Ptr, Size);
  }
  int munlock(const void *Ptr, size_t Size) override {
    ++Munlocks;
    if (FailMunlock) {
      errno = FailMunlock;
      return -1;
    }
    return HostPinningSysTy::munlock(Ptr, Size);
  }
  int getMemlockLimit(struct rlimit *Limit) override {
    Limit->rlim_cur = Limit->rlim_max = 65536;
    return 0;
  }

  std::atomic<int> Opens{0}, Reads{0}, Closes{0}, Queries{0};
  int Mlocks = 0, Munlocks = 0;
  bool NoQuery = false;
  int FailOpen = 0, FailRead = 0, FailQuery = 0, FailMlock = 0, FailMunlock = 0;
};

/// Whether this kernel answers PROCMAP_QUERY (Linux 6.11 and later).
bool kernelHasQuery() {
  HostPinningSysTy Sys;
  int Fd = Sys.open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return false;
  ProcMapQueryTy Query;
  Query.QueryFlags = CoveringOrNextVma;
  bool Works = Sys.queryMapping(Fd, Query) == 0 || errno != ENOTTY;
  Sys.close(Fd);
  return Works;
}

/// Six pages of this process: 0 read-write, 1 PROT_NONE, 2 read-only, 3
/// read-write private, 4 read-write shared (a mapping of its own next to
/// 3), 5 unmapped.
class HostPinningTest : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override {
    if (!GetParam() && !kernelHasQuery())
      GTEST_SKIP() << "the kernel has no PROCMAP_QUERY (Linux 6.11)";
    Sys.NoQuery = GetParam();
    void *P = mmap(nullptr, 6 * Page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(P, MAP_FAILED) << std::strerror(errno);
    M = static_cast<char *>(P);
    ASSERT_EQ(mprotect(M + Page, Page, PROT_NONE), 0);
    ASSERT_EQ(mprotect(M + 2 * Page, Page, PROT_READ), 0);
    ASSERT_NE(mmap(M + 4 * Page, Page, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
              MAP_FAILED);
    ASSERT_EQ(munmap(M + 5 * Page, Page), 0);
  }
  void TearDown() override {
    if (M)
      munmap(M, 6 * Page);
  }

  uintptr_t at(size_t Offset) const {
    return reinterpret_cast<uintptr_t>(M) + Offset;
  }
  /// The message of the check of [Start, Start+Size), "" if it passes.
  std::string refusal(uintptr_t Start, size_t Size) {
    std::string Msg;
    ErrorCode Code =
        codeOf(Check.check(reinterpret_cast<void *>(Start), Size), &Msg);
    EXPECT_TRUE(Code == ErrorCode::Success ||
                Code == ErrorCode::InvalidArgument)
        << Msg;
    return Msg;
  }

  CountingSysTy Sys;
  MappingCheckTy Check{Sys};
  char *M = nullptr;
};

TEST_P(HostPinningTest, RefusesWhatIsNotMappedReadWrite) {
  EXPECT_EQ(refusal(at(0), Page), "");
  EXPECT_EQ(refusal(at(8), 16), "");
  EXPECT_EQ(refusal(at(Page + 8), 64),
            range(at(Page + 8), at(Page + 72)) +
                " is mapped without read and write access (---p)");
  EXPECT_EQ(refusal(at(2 * Page), Page),
            range(at(2 * Page), at(3 * Page)) +
                " is mapped without write access (r--p)");
  // Running into the PROT_NONE page: only its part is named.
  EXPECT_EQ(refusal(at(Page - 8), 16),
            range(at(Page), at(Page + 8)) +
                " is mapped without read and write access (---p)");
  // The second page of the address space is never mapped
  // (vm.mmap_min_addr).
  EXPECT_EQ(refusal(Page, 16), range(Page, Page + 16) + " is not mapped");
  // Two read-write mappings side by side, private and shared.
  EXPECT_EQ(refusal(at(3 * Page), 2 * Page), "");
  EXPECT_EQ(refusal(at(4 * Page + 8), 8), "");
  // Running into the hole after them.
  EXPECT_EQ(refusal(at(3 * Page + 100), 3 * Page - 100),
            range(at(5 * Page), at(6 * Page)) + " is not mapped");
  // From the read-write page across every kind of refusal: the first one.
  EXPECT_EQ(refusal(at(0), 6 * Page),
            range(at(Page), at(2 * Page)) +
                " is mapped without read and write access (---p)");
}

TEST_P(HostPinningTest, QueriesOnlyTheRangesOwnMappings) {
  // Many more mappings in the process (alternating protections, so that
  // none merge) must not change what a check costs.
  std::vector<void *> Extra;
  for (int I = 0; I < 2000; ++I) {
    void *P = mmap(nullptr, Page, I % 2 ? PROT_READ : PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(P, MAP_FAILED);
    Extra.push_back(P);
  }
  for (int I = 0; I < 10; ++I)
    EXPECT_EQ(refusal(at(0), Page), "");
  EXPECT_EQ(refusal(at(3 * Page), 2 * Page), "");
  if (GetParam()) {
    // Without the query, every check reads the whole file.
    EXPECT_GT(Sys.Reads.load(), 11);
  } else {
    EXPECT_EQ(Sys.Reads.load(), 0);
    // One query per mapping of the range; the descriptor is kept.
    EXPECT_EQ(Sys.Queries.load(), 10 + 2);
    EXPECT_EQ(Sys.Opens.load(), 1);
    EXPECT_EQ(Sys.Closes.load(), 0);
  }
  for (void *P : Extra)
    munmap(P, Page);
}

INSTANTIATE_TEST_SUITE_P(Paths, HostPinningTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &Info) {
                           return Info.param ? "MapsScan" : "ProcMapQuery";
                         });

TEST(HostPinningSysTest, FailedCallsAreNamed) {
  int Local = 0;
  std::string Msg;
  {
    CountingSysTy Sys;
    Sys.FailOpen = EMFILE;
    MappingCheckTy Check(Sys);
    EXPECT_EQ(codeOf(Check.check(&Local, 4), &Msg), ErrorCode::IOError);
    EXPECT_NE(Msg.find("open(/proc/self/maps)"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find(std::strerror(EMFILE)), std::string::npos) << Msg;
  }
  {
    CountingSysTy Sys;
    Sys.FailQuery = EIO;
    MappingCheckTy Check(Sys);
    uintptr_t Addr = reinterpret_cast<uintptr_t>(&Local);
    EXPECT_EQ(codeOf(Check.check(&Local, 4), &Msg), ErrorCode::IOError);
    EXPECT_NE(Msg.find("ioctl(/proc/self/maps, PROCMAP_QUERY, " + hex(Addr) +
                       ") while checking " + range(Addr, Addr + 4)),
              std::string::npos)
        << Msg;
  }
  {
    // A sandbox that refuses the query: the file answers instead.
    CountingSysTy Sys;
    Sys.FailQuery = EPERM;
    MappingCheckTy Check(Sys);
    EXPECT_FALSE(Check.check(&Local, 4));
    EXPECT_GT(Sys.Reads.load(), 0);
    Sys.FailQuery = 0;
    // It is not asked again.
    EXPECT_EQ(codeOf(Check.check(reinterpret_cast<void *>(Page), 4), &Msg),
              ErrorCode::InvalidArgument);
    EXPECT_EQ(Sys.Queries.load(), 1);
  }
  {
    CountingSysTy Sys;
    Sys.NoQuery = true;
    Sys.FailRead = EIO;
    MappingCheckTy Check(Sys);
    EXPECT_EQ(codeOf(Check.check(&Local, 4), &Msg), ErrorCode::IOError);
    EXPECT_NE(Msg.find("read(/proc/self/maps"), std::string::npos) << Msg;
    // The descriptor of the scan was closed all the same.
    EXPECT_EQ(Sys.Closes.load(), Sys.Opens.load() - 1);
  }
}

TEST(HostPinningSysTest, PinLocksAndUnlocksThroughTheTable) {
  void *P = mmap(nullptr, 2 * Page, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(P, MAP_FAILED);
  char *M = static_cast<char *>(P);
  uintptr_t Addr = reinterpret_cast<uintptr_t>(M);
  CountingSysTy Sys;
  HostPinningTy Pinning(Page, Sys);
  EXPECT_FALSE(Pinning.pin(M, 100));
  EXPECT_EQ(Sys.Mlocks, 1);
  EXPECT_FALSE(Pinning.unpin(M, 100));
  EXPECT_EQ(Sys.Munlocks, 1);

  std::string Msg;
  Sys.FailMlock = ENOMEM;
  EXPECT_EQ(codeOf(Pinning.pin(M, 100), &Msg), ErrorCode::OutOfResources);
  EXPECT_NE(Msg.find("mlock of " + std::to_string(Page) + " bytes at " +
                     hex(Addr) + " failed: " + std::strerror(ENOMEM) +
                     "; the process may lock at most 65536 bytes"),
            std::string::npos)
      << Msg;
  Sys.FailMlock = 0;

  // munlock of pages unmapped meanwhile fails with ENOMEM, and they are
  // unlocked all the same; any other failure is reported.
  EXPECT_FALSE(Pinning.pin(M, 100));
  Sys.FailMunlock = ENOMEM;
  EXPECT_FALSE(Pinning.unpin(M, 100));
  EXPECT_FALSE(Pinning.pin(M + Page, 100));
  Sys.FailMunlock = EINVAL;
  EXPECT_EQ(codeOf(Pinning.unpin(M + Page, 100), &Msg), ErrorCode::IOError);
  EXPECT_NE(Msg.find("munlock of " + std::to_string(Page) + " bytes at " +
                     hex(Addr + Page)),
            std::string::npos)
      << Msg;
  munlock(M, 2 * Page);
  munmap(M, 2 * Page);
}

TEST(HostPinningSysTest, ConcurrentChecksShareOneDescriptor) {
  CountingSysTy Sys;
  {
    MappingCheckTy Check(Sys);
    std::atomic<int> Failures{0};
    std::vector<std::thread> Threads;
    for (int T = 0; T < 8; ++T)
      Threads.emplace_back([&] {
        int Local = 0;
        for (int I = 0; I < 200; ++I)
          if (Error Err = Check.check(&Local, sizeof Local)) {
            llvm::consumeError(std::move(Err));
            ++Failures;
          }
      });
    for (std::thread &Thread : Threads)
      Thread.join();
    EXPECT_EQ(Failures.load(), 0);
    // Threads that opened it at once closed theirs; one stays open.
    if (!Sys.NoQuery && Sys.Reads.load() == 0)
      EXPECT_EQ(Sys.Opens.load() - Sys.Closes.load(), 1);
  }
  EXPECT_EQ(Sys.Opens.load(), Sys.Closes.load());
}

} // namespace

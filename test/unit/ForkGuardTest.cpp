// SPDX-License-Identifier: Apache-2.0
//
// ForkGuardTy in real forked processes: a child forked after arm() knows it
// is one, a child forked before does not, the parent never mistakes itself
// for a child, and the error names both pids (and says "an ancestor" in a
// grandchild). Children report through their exit status and a pipe; no
// gtest assertion runs outside the test process.
#include "offloadio/ForkGuard.h"

#include "gtest/gtest.h"

#include <atomic>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace offloadio;

namespace {

/// Run \p Fn in a forked child; its return value is the exit status.
template <typename FnTy> int inChild(FnTy Fn) {
  pid_t Pid = ::fork();
  if (Pid == 0)
    ::_exit(Fn());
  int Status = -1;
  ::waitpid(Pid, &Status, 0);
  return WIFEXITED(Status) ? WEXITSTATUS(Status) : 100 + WTERMSIG(Status);
}

/// Run \p Fn in a forked child and return what it wrote to the pipe.
template <typename FnTy> std::string outputOfChild(FnTy Fn) {
  int Pipe[2];
  if (::pipe(Pipe) != 0)
    return "pipe failed";
  pid_t Pid = ::fork();
  if (Pid == 0) {
    ::close(Pipe[0]);
    std::string Out = Fn();
    ssize_t N = ::write(Pipe[1], Out.data(), Out.size());
    ::_exit(N == ssize_t(Out.size()) ? 0 : 1);
  }
  ::close(Pipe[1]);
  std::string Out;
  char Buf[512];
  ssize_t N;
  while ((N = ::read(Pipe[0], Buf, sizeof(Buf))) > 0)
    Out.append(Buf, size_t(N));
  ::close(Pipe[0]);
  ::waitpid(Pid, nullptr, 0);
  return Out;
}

TEST(ForkGuardTest, UnarmedGuardNeverReportsAFork) {
  ForkGuardTy Guard;
  EXPECT_FALSE(Guard.inForkedChild());
  EXPECT_EQ(Guard.getOwnerPid(), 0);
  EXPECT_EQ(inChild([&] { return Guard.inForkedChild() ? 1 : 0; }), 0);
}

TEST(ForkGuardTest, ArmedGuardIsForkedOnlyInChildren) {
  ForkGuardTy Guard;
  Guard.arm();
  EXPECT_FALSE(Guard.inForkedChild());
  EXPECT_EQ(Guard.getOwnerPid(), ::getpid());
  EXPECT_EQ(inChild([&] { return Guard.inForkedChild() ? 0 : 1; }), 0);
  // The parent is unchanged by having forked.
  EXPECT_FALSE(Guard.inForkedChild());
  // Arming again changes nothing.
  Guard.arm();
  EXPECT_EQ(Guard.getOwnerPid(), ::getpid());
  EXPECT_EQ(inChild([&] { return Guard.inForkedChild() ? 0 : 1; }), 0);
}

TEST(ForkGuardTest, ChildForkedBeforeArmingMayArmForItself) {
  ForkGuardTy Guard;
  EXPECT_EQ(inChild([&] {
              if (Guard.inForkedChild())
                return 1;
              Guard.arm(); // The child's own devices.
              if (Guard.inForkedChild() || Guard.getOwnerPid() != ::getpid())
                return 2;
              // And its own children are refused.
              return inChild([&] { return Guard.inForkedChild() ? 0 : 1; }) ==
                             0
                         ? 0
                         : 3;
            }),
            0);
  EXPECT_FALSE(Guard.inForkedChild());
}

TEST(ForkGuardTest, GuardsAreIndependent) {
  ForkGuardTy Armed, Unarmed;
  Armed.arm();
  EXPECT_EQ(inChild([&] {
              return Armed.inForkedChild() && !Unarmed.inForkedChild() ? 0
                                                                       : 1;
            }),
            0);
}

TEST(ForkGuardTest, ManyGuardsCreatedAndDestroyed) {
  // Nothing is registered process-wide: guards come and go freely.
  for (int I = 0; I < 100; ++I) {
    ForkGuardTy Guard;
    Guard.arm();
    EXPECT_FALSE(Guard.inForkedChild());
  }
}

TEST(ForkGuardTest, ConcurrentReadersWhileArmingNeverSeeAFork) {
  // The parent must never take itself for a child, even while another
  // thread arms the guard.
  for (int Round = 0; Round < 20; ++Round) {
    ForkGuardTy Guard;
    std::atomic<bool> Go{false}, Wrong{false};
    std::vector<std::thread> Readers;
    for (int T = 0; T < 4; ++T)
      Readers.emplace_back([&] {
        while (!Go.load())
          ;
        for (int I = 0; I < 10000; ++I)
          if (Guard.inForkedChild())
            Wrong = true;
      });
    Go = true;
    Guard.arm();
    for (std::thread &T : Readers)
      T.join();
    EXPECT_FALSE(Wrong.load());
  }
}

TEST(ForkGuardTest, ErrorNamesBothProcessesAndTheObject) {
  ForkGuardTy Guard;
  Guard.arm();
  pid_t Parent = ::getpid();
  std::string Msg = outputOfChild([&] {
    Error Err = Guard.makeForkedError("device 3", "initialised it");
    return std::to_string(::getpid()) + "|" + takeErrorMessage(std::move(Err));
  });
  size_t Bar = Msg.find('|');
  ASSERT_NE(Bar, std::string::npos) << Msg;
  std::string Child = Msg.substr(0, Bar);
  EXPECT_EQ(Msg.substr(Bar + 1),
            "device 3 used in a child process (pid " + Child +
                ") after fork(); the parent (pid " + std::to_string(Parent) +
                ") initialised it; devices cannot be shared across fork");
}

TEST(ForkGuardTest, ErrorInAGrandchildNamesTheAncestor) {
  ForkGuardTy Guard;
  Guard.arm();
  pid_t Parent = ::getpid();
  std::string Msg = outputOfChild([&] {
    return outputOfChild([&] {
      Error Err = Guard.makeForkedError("device 0", "initialised it");
      ErrorDetailsTy D = takeErrorDetails(std::move(Err));
      return std::string(D.Code == ErrorCode::ForkedChild ? "code ok: "
                                                          : "wrong code: ") +
             D.Message;
    });
  });
  EXPECT_EQ(Msg.find("code ok: "), 0u) << Msg;
  EXPECT_NE(Msg.find("after fork(); process " + std::to_string(Parent) +
                     ", an ancestor, initialised it"),
            std::string::npos)
      << Msg;
}

TEST(ForkGuardTest, ForkedChildErrorIsENODEV) {
  // libompx_io hands this errno to the program: the device is not there
  // for this process.
  EXPECT_EQ(takeErrno(makeError(ErrorCode::ForkedChild, "x")), ENODEV);
}

} // namespace

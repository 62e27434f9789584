// SPDX-License-Identifier: Apache-2.0
//
// planBatch, the checks of a batch across its operations (libompx_io):
// random small batches against a model that compares every pair of
// operations, message for message; the rule naming the other operation;
// that files are told apart by the descriptor facts given, never by asking
// the kernel; batches of 500,000 operations whose ranges all cover each
// other, which planning must take in O(n log n).
#include "BatchPlan.h"
#include "offloadio/io/SysCalls.h"

#include "gtest/gtest.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace ompxio;

namespace {

/// What the model knows of a descriptor.
struct FdModelTy {
  int File = -1;       ///< Which file; -1: no ranges (bad fd, pipe).
  bool Append = false; ///< Opened with O_APPEND.
};

/// Descriptors of every kind planBatch tells apart: two of one file (one
/// of them O_APPEND), a third of the same file (another descriptor, same
/// st_ino), one of another file, a pipe and a closed descriptor.
class BatchPlanTest : public ::testing::Test {
protected:
  void SetUp() override {
    for (std::string *Path : {&PathA, &PathB}) {
      char Name[] = "/tmp/batchplantest-XXXXXX";
      int Fd = ::mkstemp(Name);
      ASSERT_GE(Fd, 0);
      *Path = Name;
      Owned.push_back(Fd);
      Model[Fd] = {Path == &PathA ? 0 : 1, false};
    }
    FdA = Owned[0];
    FdB = Owned[1];
    FdAAppend = ::open(PathA.c_str(), O_RDWR | O_APPEND);
    FdAOther = ::open(PathA.c_str(), O_RDWR);
    ASSERT_GE(FdAAppend, 0);
    ASSERT_GE(FdAOther, 0);
    Owned.push_back(FdAAppend);
    Owned.push_back(FdAOther);
    Model[FdAAppend] = {0, true};
    Model[FdAOther] = {0, false};
    int Pipe[2];
    ASSERT_EQ(::pipe(Pipe), 0);
    Owned.push_back(Pipe[0]);
    Owned.push_back(Pipe[1]);
    Model[Pipe[0]] = {-1, false};
    // A closed descriptor: the pipe's write end, reopened then closed.
    FdClosed = ::dup(Pipe[1]);
    ASSERT_GE(FdClosed, 0);
    ::close(FdClosed);
    Model[FdClosed] = {-1, false};
  }
  void TearDown() override {
    for (int Fd : Owned)
      ::close(Fd);
    ::unlink(PathA.c_str());
    ::unlink(PathB.c_str());
  }

  /// The refusals by comparing every pair: the semantics of
  /// ompx_io_batch_submit and the naming rule of BatchPlan.h.
  std::vector<BatchRefusalTy> model(const std::vector<ompx_io_op_t> &Ops) {
    size_t N = Ops.size();
    std::vector<BatchRefusalTy> Out(N);
    for (size_t I = 0; I < N; ++I)
      if (Ops[I].opcode != OMPX_IO_OP_READ && Ops[I].opcode != OMPX_IO_OP_WRITE)
        Out[I] = {EINVAL, "opcode " + std::to_string(Ops[I].opcode) +
                              " is neither OMPX_IO_OP_READ nor "
                              "OMPX_IO_OP_WRITE"};
    // Taken before any conflict is: refused operations still conflict.
    std::vector<bool> IsCheckable(N);
    for (size_t I = 0; I < N; ++I)
      IsCheckable[I] =
          !Out[I].Errno && Ops[I].count && Ops[I].offset >= 0 &&
          Ops[I].count <= uint64_t(INT64_MAX) - uint64_t(Ops[I].offset);
    auto Checkable = [&](size_t I) { return IsCheckable[I]; };
    auto IsRead = [&](size_t I) { return Ops[I].opcode == OMPX_IO_OP_READ; };
    auto BufBegin = [&](size_t I) {
      return uint64_t(uintptr_t(Ops[I].device_buf));
    };
    auto BufEnd = [&](size_t I) {
      uint64_t B = BufBegin(I);
      return Ops[I].count > UINT64_MAX - B ? UINT64_MAX : B + Ops[I].count;
    };
    auto IsAppend = [&](size_t I) {
      return !IsRead(I) && Model[Ops[I].fd].Append;
    };
    auto FileBegin = [&](size_t I) {
      return IsAppend(I) ? 0 : uint64_t(Ops[I].offset);
    };
    auto FileEnd = [&](size_t I) {
      return IsAppend(I) ? UINT64_MAX : uint64_t(Ops[I].offset) + Ops[I].count;
    };
    // Of the J with Conflict(J), by (Begin(J), J): the first before I,
    // else the first after it; SIZE_MAX without any.
    auto Pick = [&](size_t I, auto Conflict, auto Begin) {
      auto KeyI = std::make_tuple(Begin(I), I);
      size_t Before = SIZE_MAX, After = SIZE_MAX;
      for (size_t J = 0; J < N; ++J) {
        if (J == I || !Conflict(J))
          continue;
        auto KeyJ = std::make_tuple(Begin(J), J);
        size_t &Best = KeyJ < KeyI ? Before : After;
        if (Best == SIZE_MAX || KeyJ < std::make_tuple(Begin(Best), Best))
          Best = J;
      }
      return Before != SIZE_MAX ? Before : After;
    };
    for (size_t I = 0; I < N; ++I) {
      if (!Checkable(I))
        continue;
      if (IsRead(I) && Ops[I].device_buf) {
        size_t P = Pick(
            I,
            [&](size_t J) {
              return Checkable(J) && Ops[J].device_buf &&
                     Ops[J].device_num == Ops[I].device_num &&
                     BufBegin(J) < BufEnd(I) && BufBegin(I) < BufEnd(J);
            },
            BufBegin);
        if (P != SIZE_MAX) {
          std::string Name = std::to_string(P);
          Out[I] = {EINVAL,
                    "its destination overlaps the buffer of operation " + Name};
          continue;
        }
      }
      int File = Model[Ops[I].fd].File;
      if (File < 0)
        continue;
      size_t P = Pick(
          I,
          [&](size_t J) {
            return Checkable(J) && Model[Ops[J].fd].File == File &&
                   !(IsRead(I) && IsRead(J)) && !(IsAppend(I) && IsAppend(J)) &&
                   FileBegin(J) < FileEnd(I) && FileBegin(I) < FileEnd(J);
          },
          FileBegin);
      if (P != SIZE_MAX)
        Out[I] = {EINVAL, "its file range overlaps that of operation " +
                              std::to_string(P) +
                              (IsRead(P) ? "" : ", a write")};
    }
    return Out;
  }

  /// \p Ops, one per line, for failure messages.
  std::string describe(const std::vector<ompx_io_op_t> &Ops) {
    std::string Text;
    for (size_t I = 0; I < Ops.size(); ++I)
      Text += "\n  " + std::to_string(I) + ": opcode " +
              std::to_string(Ops[I].opcode) + ", fd " +
              std::to_string(Ops[I].fd) + " (file " +
              std::to_string(Model[Ops[I].fd].File) +
              (Model[Ops[I].fd].Append ? ", append" : "") + "), buffer " +
              std::to_string(uintptr_t(Ops[I].device_buf)) + ", " +
              std::to_string(Ops[I].count) + " bytes at " +
              std::to_string(Ops[I].offset) + ", device " +
              std::to_string(Ops[I].device_num);
    return Text;
  }

  /// planBatch and the model agree on every operation of \p Ops.
  void expectModel(const std::vector<ompx_io_op_t> &Ops, uint64_t Seed) {
    std::vector<BatchRefusalTy> Got = plan(Ops);
    std::vector<BatchRefusalTy> Want = model(Ops);
    ASSERT_EQ(Got.size(), Ops.size());
    for (size_t I = 0; I < Ops.size(); ++I) {
      EXPECT_EQ(Got[I].Errno, Want[I].Errno)
          << "seed " << Seed << " op " << I << ": " << describe(Ops);
      EXPECT_EQ(Got[I].Reason, Want[I].Reason)
          << "seed " << Seed << " op " << I;
    }
  }

  static ompx_io_op_t op(int Opcode, int Fd, void *Buf, size_t Count,
                         off_t Offset, int Device = 0) {
    return {Opcode, Fd, Buf, Count, Offset, Device, 0, 0};
  }

  /// What the kernel says of every descriptor of \p Ops, asked once each,
  /// as ompx_io_batch_submit asks it.
  BatchDescriptorsTy inspect(const std::vector<ompx_io_op_t> &Ops) {
    BatchDescriptorsTy Fds;
    for (const ompx_io_op_t &Op : Ops)
      if (!Fds.count(Op.fd))
        Fds[Op.fd] = offloadio::inspectDescriptor(Sys, Op.fd);
    return Fds;
  }

  /// planBatch of \p Ops with the facts of their descriptors.
  std::vector<BatchRefusalTy> plan(const std::vector<ompx_io_op_t> &Ops) {
    return planBatch(Ops.data(), Ops.size(), inspect(Ops));
  }

  /// planBatch of \p Ops gives each operation the reason \p Want says.
  void expectReasons(const std::vector<ompx_io_op_t> &Ops,
                     const std::vector<std::string> &Want) {
    std::vector<BatchRefusalTy> Got = plan(Ops);
    for (size_t I = 0; I < Ops.size(); ++I)
      EXPECT_EQ(Got[I].Reason, Want[I]) << "op " << I;
  }

  /// Device addresses; planBatch never touches the memory.
  static void *addr(uintptr_t A) { return reinterpret_cast<void *>(A); }

  offloadio::SysTy Sys;
  std::string PathA, PathB;
  int FdA = -1, FdB = -1, FdAAppend = -1, FdAOther = -1, FdClosed = -1;
  std::vector<int> Owned;
  std::map<int, FdModelTy> Model;
};

TEST_F(BatchPlanTest, RandomSmallBatchesMatchThePairwiseModel) {
  std::vector<int> Fds = {FdA, FdB, FdAAppend, FdAOther, Owned[4], FdClosed};
  for (uint64_t Seed = 0; Seed < 20000; ++Seed) {
    std::mt19937_64 Rng(Seed);
    auto Below = [&](uint64_t N) { return uint64_t(Rng() % N); };
    std::vector<ompx_io_op_t> Ops(1 + Below(12));
    for (ompx_io_op_t &Op : Ops) {
      int Opcode = Below(20) ? int(Below(2)) : 7;
      // Buffers mostly in a small window, so that they meet; some NULL,
      // some running past the end of the address space.
      void *Buf = Below(15)  ? addr(0x10000 + Below(48))
                  : Below(2) ? nullptr
                             : addr(UINTPTR_MAX - Below(8));
      size_t Count = Below(10) ? 1 + Below(16) : 0;
      off_t Offset = Below(15)  ? off_t(Below(48))
                     : Below(2) ? -1
                                : off_t(INT64_MAX - int64_t(Below(8)));
      Op =
          op(Opcode, Fds[Below(Fds.size())], Buf, Count, Offset, int(Below(2)));
    }
    expectModel(Ops, Seed);
    if (HasFailure())
      return;
  }
}

TEST_F(BatchPlanTest, RandomBatchesOfOneRangeMatchThePairwiseModel) {
  // Many operations over few ranges: long chains of covering ranges.
  for (uint64_t Seed = 0; Seed < 200; ++Seed) {
    std::mt19937_64 Rng(Seed);
    auto Below = [&](uint64_t N) { return uint64_t(Rng() % N); };
    std::vector<ompx_io_op_t> Ops(100 + Below(100));
    for (ompx_io_op_t &Op : Ops)
      Op = op(int(Below(2)), Below(4) ? FdA : FdAAppend,
              addr(0x10000 + 64 * Below(300) + Below(2)), 64 + Below(64),
              off_t(Below(4) * 4096 + Below(3)), 0);
    expectModel(Ops, Seed);
    if (HasFailure())
      return;
  }
}

TEST_F(BatchPlanTest, NamesTheFirstConflictBeforeElseTheFirstAfter) {
  const std::string Buffer = "its destination overlaps the buffer of "
                             "operation ";
  const std::string File = "its file range overlaps that of operation ";
  // Three reads into one destination: 0 names the next after it, 1 and 2
  // the first before them.
  expectReasons({op(OMPX_IO_OP_READ, FdA, addr(0x1000), 16, 0),
                 op(OMPX_IO_OP_READ, FdA, addr(0x1000), 16, 16),
                 op(OMPX_IO_OP_READ, FdA, addr(0x1000), 16, 32)},
                {Buffer + "1", Buffer + "0", Buffer + "0"});
  // By start, not by index: operation 2's file range starts first.
  expectReasons(
      {op(OMPX_IO_OP_WRITE, FdA, addr(0x1000), 16, 8),
       op(OMPX_IO_OP_READ, FdA, addr(0x2000), 16, 12),
       op(OMPX_IO_OP_WRITE, FdAOther, addr(0x3000), 16, 0)},
      {File + "2, a write", File + "2, a write", File + "0, a write"});
  // A read between two appends: reads never conflict with reads, appends
  // never with appends, so each append names the read.
  expectReasons(
      {op(OMPX_IO_OP_WRITE, FdAAppend, addr(0x1000), 16, 0),
       op(OMPX_IO_OP_READ, FdA, addr(0x2000), 16, 100),
       op(OMPX_IO_OP_WRITE, FdAAppend, addr(0x3000), 16, 0),
       op(OMPX_IO_OP_READ, FdA, addr(0x4000), 16, 200)},
      {File + "1", File + "0, a write", File + "1", File + "0, a write"});
  // A destination conflict is named before a file-range one.
  expectReasons({op(OMPX_IO_OP_READ, FdA, addr(0x1000), 16, 0),
                 op(OMPX_IO_OP_WRITE, FdA, addr(0x1000), 16, 0)},
                {Buffer + "1", File + "0"});
}

TEST_F(BatchPlanTest, ConflictsOnlyWithinOneDeviceAndOneFile) {
  // The same buffer address on two devices, the same range of two files,
  // ranges that only touch: nothing is refused.
  std::vector<ompx_io_op_t> Ops = {
      op(OMPX_IO_OP_READ, FdA, addr(0x1000), 16, 0, 0),
      op(OMPX_IO_OP_READ, FdB, addr(0x1000), 16, 0, 1),
      op(OMPX_IO_OP_WRITE, FdB, addr(0x1010), 16, 16, 0),
      op(OMPX_IO_OP_WRITE, FdA, addr(0x2000), 16, 16, 1),
      // The plugin's to refuse: no ranges here.
      op(OMPX_IO_OP_WRITE, Owned[4], addr(0x4000), 16, 0, 0),
      op(OMPX_IO_OP_WRITE, FdClosed, addr(0x3000), 16, 0, 0),
      op(OMPX_IO_OP_READ, FdA, nullptr, 16, 0, 0),
      op(OMPX_IO_OP_READ, FdA, addr(0x1000), 0, 0, 0),
      op(OMPX_IO_OP_READ, FdA, addr(0x1000), 16, -1, 0)};
  for (const BatchRefusalTy &R : plan(Ops))
    EXPECT_EQ(R.Errno, 0) << R.Reason;
}

TEST_F(BatchPlanTest, TellsFilesApartByTheFactsItIsGiven) {
  // Numbers no descriptor has: what they are comes from the facts alone.
  constexpr int FdX = 100000, FdY = 100001, FdXAppend = 100002;
  auto Facts = [](int Fd, int Flags, mode_t Mode, ino_t Ino) {
    offloadio::DescriptorFactsTy F;
    F.Fd = Fd;
    F.Flags = Flags;
    F.St.st_mode = Mode;
    F.St.st_dev = 7;
    F.St.st_ino = Ino;
    return F;
  };
  BatchDescriptorsTy Fds = {{FdX, Facts(FdX, O_RDWR, S_IFREG, 42)},
                            {FdY, Facts(FdY, O_RDWR, S_IFREG, 42)},
                            {FdXAppend, Facts(FdXAppend, O_RDWR | O_APPEND,
                                              S_IFBLK, 42)}};
  // Two descriptors of one file (one inode): their writes conflict.
  std::vector<ompx_io_op_t> Ops = {
      op(OMPX_IO_OP_WRITE, FdX, addr(0x1000), 16, 0),
      op(OMPX_IO_OP_WRITE, FdY, addr(0x2000), 16, 8)};
  std::vector<BatchRefusalTy> Got = planBatch(Ops.data(), Ops.size(), Fds);
  EXPECT_EQ(Got[0].Reason, "its file range overlaps that of operation 1, "
                           "a write");
  EXPECT_EQ(Got[1].Reason, "its file range overlaps that of operation 0, "
                           "a write");
  // O_APPEND from the facts: the append covers the whole file.
  Ops = {op(OMPX_IO_OP_READ, FdX, addr(0x1000), 16, 1 << 20),
         op(OMPX_IO_OP_WRITE, FdXAppend, addr(0x2000), 16, 0)};
  Got = planBatch(Ops.data(), Ops.size(), Fds);
  EXPECT_EQ(Got[0].Reason, "its file range overlaps that of operation 1, "
                           "a write");
  EXPECT_EQ(Got[1].Reason, "its file range overlaps that of operation 0");
  // Another inode, a pipe, a descriptor that is not open or has no facts:
  // no ranges to meet.
  Fds[FdY] = Facts(FdY, O_RDWR, S_IFREG, 43);
  Ops = {op(OMPX_IO_OP_WRITE, FdX, addr(0x1000), 16, 0),
         op(OMPX_IO_OP_WRITE, FdY, addr(0x2000), 16, 0)};
  for (const BatchRefusalTy &R : planBatch(Ops.data(), Ops.size(), Fds))
    EXPECT_EQ(R.Errno, 0) << R.Reason;
  for (offloadio::DescriptorFactsTy Other :
       {Facts(FdY, O_RDWR, S_IFIFO, 42), Facts(FdY, -1, 0, 0),
        Facts(FdY, O_PATH, 0, 0)}) {
    Fds[FdY] = Other;
    for (const BatchRefusalTy &R : planBatch(Ops.data(), Ops.size(), Fds))
      EXPECT_EQ(R.Errno, 0) << R.Reason;
  }
  Fds.erase(FdY);
  for (const BatchRefusalTy &R : planBatch(Ops.data(), Ops.size(), Fds))
    EXPECT_EQ(R.Errno, 0) << R.Reason;
}

/// Operations in the worst patterns for a sweep over open ranges.
TEST_F(BatchPlanTest, LargeBatchesOfCoveringRanges) {
  constexpr size_t N = 500000;
  auto Plan = [&](auto Make) {
    std::vector<ompx_io_op_t> Ops(N);
    for (size_t I = 0; I < N; ++I)
      Ops[I] = Make(I);
    return plan(Ops);
  };
  // Reads of one file range into distinct buffers: all valid.
  for (const BatchRefusalTy &R : Plan([&](size_t I) {
         return op(OMPX_IO_OP_READ, FdA, addr(0x10000 + 4096 * I), 4096, 0);
       }))
    ASSERT_EQ(R.Errno, 0) << R.Reason;
  // Writes of one source to distinct ranges: all valid.
  for (const BatchRefusalTy &R : Plan([&](size_t I) {
         return op(OMPX_IO_OP_WRITE, FdA, addr(0x10000), 4096, off_t(4096 * I));
       }))
    ASSERT_EQ(R.Errno, 0) << R.Reason;
  // Reads into one destination: all refused, each naming operation 0,
  // which names 1.
  auto Got = Plan([&](size_t I) {
    return op(OMPX_IO_OP_READ, FdA, addr(0x10000), 4096, off_t(4096 * I));
  });
  for (size_t I = 0; I < N; ++I)
    ASSERT_EQ(Got[I].Reason, std::string("its destination overlaps the buffer "
                                         "of operation ") +
                                 (I ? "0" : "1"));
  // Writes to one range; writes to distinct ranges among appends: all
  // refused.
  Got = Plan([&](size_t I) {
    return op(OMPX_IO_OP_WRITE, FdA, addr(0x10000 + 4096 * I), 4096, 0);
  });
  for (size_t I = 0; I < N; ++I)
    ASSERT_EQ(Got[I].Reason, std::string("its file range overlaps that of "
                                         "operation ") +
                                 (I ? "0" : "1") + ", a write");
  Got = Plan([&](size_t I) {
    return op(OMPX_IO_OP_WRITE, I % 2 ? FdA : FdAAppend,
              addr(0x10000 + 4096 * I), 4096, off_t(4096 * I));
  });
  for (size_t I = 0; I < N; ++I)
    ASSERT_EQ(Got[I].Errno, EINVAL) << I;
}

} // namespace

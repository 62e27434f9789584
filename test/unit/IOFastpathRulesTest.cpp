// SPDX-License-Identifier: Apache-2.0
//
// The checks every fastpath shares (IOFastpathRules.h): the mount table's
// file-system rule, on mountinfo files written here and on the file-system
// magic when the table has no entry; the alignment of a transfer and of a
// descriptor; a fastpath's verdicts on storage devices; and the acceptance
// of a request and of its chunks (IOFastpathChecksTy) on the shared fake
// syscalls, each refusal on its own.
#include "FakeSys.h"

#include "offloadio/io/IOFastpathRules.h"
#include "offloadio/io/SysCalls.h"

#include "gtest/gtest.h"

#include <fcntl.h>
#include <fstream>
#include <string>
#include <sys/sysmacros.h>
#include <unistd.h>

using namespace offloadio;
using offloadio::unittest::MemoryFileSysTy;

namespace {

constexpr const char *Rule = ", and DMA serves only ext4 and xfs";

/// A mountinfo file with the lines given, removed at the end of the test.
class MountInfoFileTy {
public:
  explicit MountInfoFileTy(const std::string &Text) {
    char Name[] = "/tmp/offloadio-mountinfo-XXXXXX";
    int Fd = ::mkstemp(Name);
    EXPECT_GE(Fd, 0);
    ::close(Fd);
    Path = Name;
    std::ofstream(Path) << Text;
  }
  ~MountInfoFileTy() { ::unlink(Path.c_str()); }
  const char *path() const { return Path.c_str(); }

private:
  std::string Path;
};

// Device 8:1 is xfs, 8:2 ext4 (ordered), 8:3 ext4 data=journal, 8:4 tmpfs
// with optional tags before the separator, 8:5 a short line.
const char *const Table =
    "21 1 8:1 / /data rw,relatime shared:1 - xfs /dev/sda1 rw,attr2\n"
    "22 1 8:2 / /home rw,relatime - ext4 /dev/sda2 rw,data=ordered\n"
    "23 1 8:3 / /journal rw master:2 shared:3 - ext4 /dev/sda3 "
    "rw,data=journal\n"
    "24 1 8:4 / /scratch rw shared:4 propagate_from:1 - tmpfs tmpfs rw\n"
    "25 1 8:5 / /short\n";

TEST(IOFastpathRulesTest, FindsTheMountOfADevice) {
  MountInfoFileTy Info(Table);
  auto M = findMount(makedev(8, 3), Info.path());
  ASSERT_TRUE(M.has_value());
  EXPECT_EQ(M->Type, "ext4");
  EXPECT_EQ(M->MountPoint, "/journal");
  EXPECT_EQ(M->SuperOptions, "rw,data=journal");
  auto Tmp = findMount(makedev(8, 4), Info.path());
  ASSERT_TRUE(Tmp.has_value());
  EXPECT_EQ(Tmp->Type, "tmpfs");
  EXPECT_EQ(Tmp->MountPoint, "/scratch");
  EXPECT_FALSE(findMount(makedev(8, 5), Info.path()).has_value());
  EXPECT_FALSE(findMount(makedev(9, 9), Info.path()).has_value());
  EXPECT_FALSE(findMount(makedev(8, 1), "/nonexistent/mountinfo").has_value());
}

TEST(IOFastpathRulesTest, MountOptionsMatchWhole) {
  EXPECT_TRUE(hasMountOption("rw,data=ordered", "data=ordered"));
  EXPECT_TRUE(hasMountOption("data=journal", "data=journal"));
  EXPECT_FALSE(hasMountOption("rw,data=orderedx", "data=ordered"));
  EXPECT_FALSE(hasMountOption("", "rw"));
}

TEST(IOFastpathRulesTest, FilesystemRuleFromTheMountTable) {
  MountInfoFileTy Info(Table);
  EXPECT_EQ(directDMAFilesystemRefusal(-1, makedev(8, 1), Rule, Info.path()),
            "");
  EXPECT_EQ(directDMAFilesystemRefusal(-1, makedev(8, 2), Rule, Info.path()),
            "");
  EXPECT_EQ(directDMAFilesystemRefusal(-1, makedev(8, 3), Rule, Info.path()),
            std::string("the ext4 filesystem at /journal is mounted "
                        "data=journal") +
                Rule);
  EXPECT_EQ(directDMAFilesystemRefusal(-1, makedev(8, 4), Rule, Info.path()),
            std::string("the file is on tmpfs at /scratch") + Rule);
}

TEST(IOFastpathRulesTest, FilesystemRuleFromTheMagicWithoutAMount) {
  MountInfoFileTy Empty("");
  // procfs (magic 0x9fa0) is neither ext4 nor xfs.
  int Fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(Fd, 0);
  EXPECT_EQ(directDMAFilesystemRefusal(Fd, makedev(9, 9), Rule, Empty.path()),
            std::string("the file is on a filesystem of type 0x9fa0") + Rule);
  ::close(Fd);
  // Nothing tells (fstatfs fails): no refusal.
  EXPECT_EQ(directDMAFilesystemRefusal(-1, makedev(9, 9), Rule, Empty.path()),
            "");
}

TEST(IOFastpathRulesTest, MisalignmentNamesEachBadPart) {
  alignas(4096) static char Page[2 * 4096];
  EXPECT_FALSE(IOMisalignmentTy::of(4096, 8192, 4096, Page).any());
  IOMisalignmentTy All = IOMisalignmentTy::of(4096, 5, 7, Page + 1);
  EXPECT_TRUE(All.any());
  EXPECT_EQ(All.describe("file offset", "buffer X"),
            "file offset 5, size 7, buffer X");
  IOMisalignmentTy Size = IOMisalignmentTy::of(4096, 4096, 100, Page);
  EXPECT_TRUE(Size.any());
  EXPECT_EQ(Size.describe("offset", "address Y"), "size 100");
  IOMisalignmentTy Addr = IOMisalignmentTy::of(512, 512, 1024, Page + 8);
  EXPECT_EQ(Addr.describe("offset", "address Y"), "address Y");
}

TEST(IOFastpathRulesTest, TransferAlignmentIsTheLargerOfVendorAndDescriptor) {
  MemoryFileSysTy Sys;
  Sys.DioAlign = 512;
  EXPECT_EQ(directTransferAlignment(Sys, 3, 4096), 4096u);
  Sys.DioAlign = 0;
  EXPECT_EQ(directTransferAlignment(Sys, 3, 4096), 4096u);
  Sys.DioAlign = 16384;
  EXPECT_EQ(directTransferAlignment(Sys, 3, 4096), 16384u);
}

TEST(IOFastpathRulesTest, VerdictsKeepTheFirstDecisionUntilARefusal) {
  IOStorageVerdictsTy V;
  dev_t A = makedev(8, 1), B = makedev(8, 2);
  EXPECT_FALSE(V.find(A).has_value());
  EXPECT_EQ(V.decide(A, ""), "");
  // A verdict recorded first stands.
  EXPECT_EQ(V.decide(A, "later"), "");
  EXPECT_EQ(V.find(A).value_or("?"), "");
  EXPECT_EQ(V.refused(), 0u);
  // A refusal replaces it, and stands against later decisions.
  V.refuse(A, "failed with ENODEV");
  EXPECT_EQ(V.find(A).value_or(""), "failed with ENODEV");
  EXPECT_EQ(V.decide(A, ""), "failed with ENODEV");
  EXPECT_EQ(V.decide(B, "on tmpfs"), "on tmpfs");
  EXPECT_EQ(V.refused(), 2u);
}

//===----------------------------------------------------------------------===//
// IOFastpathChecksTy
//===----------------------------------------------------------------------===//

/// A pointer as the checks print it.
std::string ptrText(const void *Ptr) {
  char Buffer[32];
  std::snprintf(Buffer, sizeof(Buffer), "%p", Ptr);
  return Buffer;
}

/// The checks of a vendor "DMA" over the in-memory file of MemoryFileSysTy
/// (a /dev/null descriptor that fstat reports as a regular file on device
/// 8:4), into an 8 KiB "device" allocation; the caller's descriptor has
/// O_DIRECT. Each test breaks one thing.
class IOFastpathChecksTest : public ::testing::Test {
protected:
  void SetUp() override {
    Fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    ASSERT_GE(Fd, 0);
    Sys.CallerDirect = true;
    Sys.FileSystem = makedev(8, 4);
    Rules.Vendor = "DMA";
    Rules.Alignment = 4096;
    Alloc = AllocationInfoTy{Memory, sizeof(Memory), AllocKindTy::Device};
  }
  void TearDown() override { ::close(Fd); }

  /// Whether a fresh IOFastpathChecksTy of Rules accepts; its reason in Why.
  bool accepts(const void *Ptr, size_t Count, off_t Offset) {
    IOFastpathChecksTy Checks(Sys, Rules);
    Why.clear();
    return Checks.accepts(Fd, Ptr, Count, Offset, Alloc, 3, Why);
  }

  // 8 KiB aligned: a test asks for an O_DIRECT alignment of 8 KiB.
  alignas(8192) static inline char Memory[2 * 4096];
  MemoryFileSysTy Sys;
  IOFastpathRulesTy Rules;
  std::optional<AllocationInfoTy> Alloc;
  int Fd = -1;
  std::string Why;
};

TEST_F(IOFastpathChecksTest, AcceptsAnAlignedRequestIntoDeviceMemory) {
  EXPECT_TRUE(accepts(Memory, 4096, 8192)) << Why;
  EXPECT_EQ(Why, "");
  // omp_target_alloc's memory (DEFAULT) is device memory too.
  Alloc->Kind = AllocKindTy::Default;
  EXPECT_TRUE(accepts(Memory + 4096, 4096, 0)) << Why;
}

TEST_F(IOFastpathChecksTest, RefusesNothingToTransfer) {
  EXPECT_FALSE(accepts(Memory, 0, 0));
  EXPECT_EQ(Why, "nothing to transfer");
}

TEST_F(IOFastpathChecksTest, RefusesADescriptorWithoutODirect) {
  Sys.CallerDirect = false;
  EXPECT_FALSE(accepts(Memory, 4096, 0));
  EXPECT_EQ(Why, "fd " + std::to_string(Fd) + " is not open with O_DIRECT");
}

TEST_F(IOFastpathChecksTest, SaysWhyTheFlagsAreUnknown) {
  IOFastpathChecksTy Checks(Sys, Rules);
  EXPECT_FALSE(Checks.accepts(-1, Memory, 4096, 0, Alloc, 3, Why));
  EXPECT_EQ(Why, std::string("fcntl(fd -1, F_GETFL) failed: ") +
                     std::strerror(EBADF));
}

TEST_F(IOFastpathChecksTest, RefusesMemoryThatIsNotTheDevices) {
  Alloc.reset();
  EXPECT_FALSE(accepts(Memory, 4096, 0));
  EXPECT_EQ(Why, "buffer " + ptrText(Memory) + " is not memory of device 3");
  Alloc = AllocationInfoTy{Memory, sizeof(Memory), AllocKindTy::Host};
  EXPECT_FALSE(accepts(Memory, 4096, 0));
  EXPECT_EQ(Why, "buffer " + ptrText(Memory) +
                     " is host memory, DMA needs device memory");
  Alloc->Kind = AllocKindTy::Shared;
  EXPECT_FALSE(accepts(Memory, 4096, 0));
  EXPECT_EQ(Why, "buffer " + ptrText(Memory) +
                     " is shared memory, DMA needs device memory");
}

TEST_F(IOFastpathChecksTest, RefusesARangePastTheAllocation) {
  EXPECT_FALSE(accepts(Memory + 4096, 8192, 0));
  EXPECT_EQ(Why, "8192 bytes at " + ptrText(Memory + 4096) +
                     " run past the end of its 8192-byte allocation");
}

TEST_F(IOFastpathChecksTest, SaysWhyFstatFailed) {
  Sys.FstatErrno = EIO;
  EXPECT_FALSE(accepts(Memory, 4096, 0));
  EXPECT_EQ(Why, "fstat of fd " + std::to_string(Fd) +
                     " failed: " + std::strerror(EIO));
}

TEST_F(IOFastpathChecksTest, ServesOnlyTheFileTypesOfTheRules) {
  std::string FdText = "fd " + std::to_string(Fd);
  Sys.FileType = S_IFIFO;
  EXPECT_FALSE(accepts(Memory, 4096, 0));
  EXPECT_EQ(Why, FdText + " is not a regular file");
  Sys.FileType = S_IFBLK;
  EXPECT_FALSE(accepts(Memory, 4096, 0));
  EXPECT_EQ(Why, FdText + " is not a regular file");
  Rules.BlockDevices = true;
  EXPECT_TRUE(accepts(Memory, 4096, 0)) << Why;
  Sys.FileType = S_IFIFO;
  EXPECT_FALSE(accepts(Memory, 4096, 0));
  EXPECT_EQ(Why, FdText + " is neither a regular file nor a block device");
}

TEST_F(IOFastpathChecksTest, NamesEachMisalignedPart) {
  EXPECT_FALSE(accepts(Memory + 512, 4096 + 100, 4096 + 7));
  EXPECT_EQ(Why, "DMA needs 4096-byte alignment; not aligned: file offset "
                 "4103, size 4196, buffer " +
                     ptrText(Memory + 512));
  // The descriptor's O_DIRECT alignment, when larger, is the one needed.
  Sys.DioAlign = 8192;
  EXPECT_FALSE(accepts(Memory, 8192, 4096));
  EXPECT_EQ(Why, "DMA needs 8192-byte alignment; not aligned: file offset "
                 "4096");
  EXPECT_TRUE(accepts(Memory, 8192, 8192)) << Why;
}

TEST_F(IOFastpathChecksTest, AppliesTheFilesystemRuleOnlyIfAsked) {
  MountInfoFileTy Info(Table);
  Rules.MountInfo = Info.path();
  // 8:4 is tmpfs: served without the rule ...
  EXPECT_TRUE(accepts(Memory, 4096, 0)) << Why;
  // ... refused with it, but a block device has no file-system rule.
  Rules.FilesystemRule = true;
  Rules.FilesystemRuleText = Rule;
  EXPECT_FALSE(accepts(Memory, 4096, 0));
  EXPECT_EQ(Why, std::string("the file is on tmpfs at /scratch") + Rule);
  Rules.BlockDevices = true;
  Sys.FileType = S_IFBLK;
  EXPECT_TRUE(accepts(Memory, 4096, 0)) << Why;
  // 8:1 is xfs.
  Sys.FileType = S_IFREG;
  Sys.FileSystem = makedev(8, 1);
  EXPECT_TRUE(accepts(Memory, 4096, 0)) << Why;
}

TEST_F(IOFastpathChecksTest, RefusedStorageStaysRefused) {
  IOFastpathChecksTy Checks(Sys, Rules);
  ASSERT_TRUE(Checks.accepts(Fd, Memory, 4096, 0, Alloc, 3, Why)) << Why;
  EXPECT_EQ(Checks.refusedStorage(), 0u);
  Checks.refuseStorage(makedev(8, 4), "DMA failed with ENODEV before");
  EXPECT_EQ(Checks.refusedStorage(), 1u);
  EXPECT_FALSE(Checks.accepts(Fd, Memory, 4096, 0, Alloc, 3, Why));
  EXPECT_EQ(Why, "DMA failed with ENODEV before");
  // Another file system is still served.
  Sys.FileSystem = makedev(8, 1);
  Why.clear();
  EXPECT_TRUE(Checks.accepts(Fd, Memory, 4096, 0, Alloc, 3, Why)) << Why;
}

TEST_F(IOFastpathChecksTest, ChecksEachChunk) {
  IOFastpathChecksTy Checks(Sys, Rules);
  IOFastpathChunkTy Chunk;
  ASSERT_FALSE(
      bool(Checks.checkChunk("read", 3, Fd, Memory, 4096, 4096, Chunk)));
  EXPECT_EQ(Chunk.Storage, makedev(8, 4));
  EXPECT_EQ(Chunk.Alignment, 4096u);
  EXPECT_TRUE(S_ISREG(Chunk.St.st_mode));

  // A chunk the engine cut at an unaligned size: ENOTSUP, the staged path
  // takes it.
  ErrorDetailsTy D = takeErrorDetails(
      Checks.checkChunk("write", 3, Fd, Memory, 1000, 4096, Chunk));
  EXPECT_EQ(D.Errno, ENOTSUP);
  EXPECT_EQ(D.Message, "DMA write on device 3: the chunk of 1000 bytes at "
                       "file offset 4096 into " +
                           ptrText(Memory) + " is not 4096-byte aligned: " +
                           std::strerror(ENOTSUP));

  // Storage refused since the request was accepted: ENOTSUP.
  Checks.refuseStorage(makedev(8, 4), "DMA failed with EREMOTEIO before");
  D = takeErrorDetails(
      Checks.checkChunk("read", 3, Fd, Memory, 4096, 0, Chunk));
  EXPECT_EQ(D.Errno, ENOTSUP);
  EXPECT_EQ(D.Message,
            std::string("DMA read on device 3: DMA failed with EREMOTEIO "
                        "before: ") +
                std::strerror(ENOTSUP));

  // fstat failing is an error of the request, with fstat's errno.
  Sys.FstatErrno = EIO;
  D = takeErrorDetails(
      Checks.checkChunk("read", 3, Fd, Memory, 4096, 0, Chunk));
  EXPECT_EQ(D.Errno, EIO);
  EXPECT_NE(
      D.Message.find("DMA read on device 3: fstat of fd " + std::to_string(Fd)),
      std::string::npos)
      << D.Message;
}

} // namespace

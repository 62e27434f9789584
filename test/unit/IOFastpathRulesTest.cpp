// SPDX-License-Identifier: Apache-2.0
//
// The checks every fastpath shares (IOFastpathRules.h): the mount table's
// file-system rule, on mountinfo files written here and on the file-system
// magic when the table has no entry; the alignment of a transfer and of a
// descriptor; and a fastpath's verdicts on storage devices.
#include "offloadio/io/IOFastpathRules.h"
#include "offloadio/io/SysCalls.h"

#include "gtest/gtest.h"

#include <fcntl.h>
#include <fstream>
#include <string>
#include <sys/sysmacros.h>
#include <unistd.h>

using namespace offloadio;

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

/// Syscalls whose O_DIRECT alignment is the test's.
class AlignmentSysTy : public SysTy {
public:
  size_t Alignment = 0;
  size_t directIOAlignment(int) override { return Alignment; }
};

TEST(IOFastpathRulesTest, TransferAlignmentIsTheLargerOfVendorAndDescriptor) {
  AlignmentSysTy Sys;
  Sys.Alignment = 512;
  EXPECT_EQ(directTransferAlignment(Sys, 3, 4096), 4096u);
  Sys.Alignment = 0;
  EXPECT_EQ(directTransferAlignment(Sys, 3, 4096), 4096u);
  Sys.Alignment = 16384;
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

} // namespace

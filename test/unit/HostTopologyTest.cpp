// SPDX-License-Identifier: Apache-2.0
//
// The host topology (HostTopology.h) and its CPU lists (CpuSet.h): the
// cpulist syntax, PCI addresses, and the placement decided from fake sysfs
// trees: one node, two nodes, a device on node 1, a node the kernel does
// not know, a process mask without the device's CPUs, malformed files.
#include "FakeSysfs.h"

#include "offloadio/CpuSet.h"
#include "offloadio/HostTopology.h"

#include "gtest/gtest.h"

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

CpuSetTy parsed(llvm::StringRef Text) {
  auto Set = CpuSetTy::parse(Text, "test");
  EXPECT_TRUE(bool(Set)) << llvm::toString(Set.takeError());
  return Set ? *Set : CpuSetTy();
}

std::string parseError(llvm::StringRef Text) {
  auto Set = CpuSetTy::parse(Text, "/sys/x/cpulist");
  if (Set)
    return "parsed as " + Set->str();
  return llvm::toString(Set.takeError());
}

TEST(CpuSetTest, ParsesListsRangesAndNothing) {
  EXPECT_EQ(parsed("0-7,16-23\n").str(), "0-7,16-23");
  EXPECT_EQ(parsed("3").cpus(), std::vector<unsigned>{3});
  EXPECT_TRUE(parsed("").empty());
  EXPECT_TRUE(parsed("\n").empty());
  EXPECT_EQ(parsed(" 5,1-2,2 ").str(), "1-2,5");
  EXPECT_EQ(parsed("0-7,16-23").size(), 16u);
  EXPECT_EQ(CpuSetTy({4, 0, 1, 2, 7}).str(), "0-2,4,7");
}

TEST(CpuSetTest, MalformedListsNameTheFileAndTheItem) {
  for (const char *Bad : {"a", "1-", "-3", "3-1", "1,,2", "0x1", "1 2",
                          "+1", "99999999", "70000"}) {
    std::string Msg = parseError(Bad);
    EXPECT_NE(Msg.find("/sys/x/cpulist"), std::string::npos) << Bad << ": "
                                                              << Msg;
    EXPECT_NE(Msg.find("is not a CPU list"), std::string::npos) << Msg;
  }
  EXPECT_NE(parseError("3-1").find("ends before it starts"),
            std::string::npos);
}

TEST(CpuSetTest, IntersectsAndContains) {
  CpuSetTy A = parsed("0-7"), B = parsed("4-11");
  EXPECT_EQ(A.intersect(B).str(), "4-7");
  EXPECT_TRUE(A.intersect(parsed("8-9")).empty());
  EXPECT_TRUE(A.contains(7));
  EXPECT_FALSE(A.contains(8));
}

TEST(HostTopologyTest, NormalizesPCIAddresses) {
  auto Norm = [](llvm::StringRef A) {
    auto N = HostTopologyTy::normalizePCIAddress(A);
    return N ? *N : "error: " + llvm::toString(N.takeError());
  };
  EXPECT_EQ(Norm("0000:3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(Norm("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(Norm("3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(Norm("00000001:c1:1f.7"), "0001:c1:1f.7");
  EXPECT_EQ(Norm("3B:0.1"), "0000:3b:00.1");
  for (const char *Bad : {"", "3b", "3b:00", "3b:00.8", "3b:20.0",
                          "x:3b:00.0", "1:2:3:4.0", "3b:00.0.1"})
    EXPECT_NE(Norm(Bad).find("is not a PCI address"), std::string::npos)
        << Bad;
}

TEST(HostTopologyTest, DeviceOnNodeOneRunsOnItsLocalCpus) {
  FakeSysfsTy Sys;
  Sys.node(0, "0-3");
  Sys.node(1, "4-7");
  Sys.device("0000:3b:00.0", "1", "4-5");
  HostTopologyTy T(Sys.root());
  CpuPlacementTy P = T.place("3B:00.0", parsed("0-7"));
  EXPECT_TRUE(P.placed()) << P.Reason;
  EXPECT_EQ(P.Node, 1);
  EXPECT_EQ(P.Cpus.str(), "4-5");
  EXPECT_EQ(P.describe(), "node 1, CPUs 4-5");
}

TEST(HostTopologyTest, WithoutLocalCpusTheNodesCpusServe) {
  FakeSysfsTy Sys;
  Sys.node(0, "0-3");
  Sys.node(1, "4-7");
  Sys.device("0000:3b:00.0", "1", nullptr);
  Sys.device("0000:af:00.0", "0", "");
  HostTopologyTy T(Sys.root());
  EXPECT_EQ(T.place("0000:3b:00.0", parsed("0-7")).Cpus.str(), "4-7");
  EXPECT_EQ(T.place("0000:af:00.0", parsed("0-7")).Cpus.str(), "0-3");
}

TEST(HostTopologyTest, OnlyTheProcessMaskIsUsed) {
  FakeSysfsTy Sys;
  Sys.node(0, "0-3");
  Sys.node(1, "4-7");
  Sys.device("0000:3b:00.0", "1", "4-7");
  HostTopologyTy T(Sys.root());
  EXPECT_EQ(T.place("0000:3b:00.0", parsed("2-5")).Cpus.str(), "4-5");
  CpuPlacementTy P = T.place("0000:3b:00.0", parsed("0-3"));
  EXPECT_FALSE(P.placed());
  EXPECT_EQ(P.Node, 1);
  EXPECT_EQ(P.Reason, "the process's CPU mask (0-3) holds none of the CPUs "
                      "local to 0000:3b:00.0 (4-7)");
}

TEST(HostTopologyTest, OneNodeMeansNoPlacement) {
  FakeSysfsTy Sys;
  Sys.node(0, "0-7");
  Sys.device("0000:3b:00.0", "0", "0-7");
  CpuPlacementTy P = HostTopologyTy(Sys.root()).place("0000:3b:00.0",
                                                      parsed("0-7"));
  EXPECT_FALSE(P.placed());
  EXPECT_EQ(P.Node, 0);
  EXPECT_EQ(P.describe(), "none: the host has one NUMA node with CPUs");
  // A node of memory alone does not count.
  Sys.node(1, "");
  EXPECT_FALSE(HostTopologyTy(Sys.root())
                   .place("0000:3b:00.0", parsed("0-7"))
                   .placed());
  // Nor does a tree without nodes (a kernel without NUMA).
  FakeSysfsTy Bare;
  Bare.device("0000:3b:00.0", "-1", nullptr);
  EXPECT_EQ(HostTopologyTy(Bare.root())
                .place("0000:3b:00.0", parsed("0-7"))
                .Reason,
            "the host has one NUMA node with CPUs");
}

TEST(HostTopologyTest, UnknownNodeMeansNoPlacement) {
  FakeSysfsTy Sys;
  Sys.node(0, "0-3");
  Sys.node(1, "4-7");
  Sys.device("0000:3b:00.0", "-1", "0-7");
  HostTopologyTy T(Sys.root());
  CpuPlacementTy P = T.place("0000:3b:00.0", parsed("0-7"));
  EXPECT_FALSE(P.placed());
  EXPECT_EQ(P.Node, -1);
  EXPECT_EQ(P.Reason, "the kernel does not know the NUMA node of 0000:3b:00.0");
  // A device sysfs does not list at all.
  EXPECT_EQ(T.place("0000:01:00.0", parsed("0-7")).Reason,
            "the kernel does not know the NUMA node of 0000:01:00.0");
}

TEST(HostTopologyTest, MalformedFilesAreNamedInTheReason) {
  FakeSysfsTy Sys;
  Sys.node(0, "0-3");
  Sys.node(1, "4-7");
  Sys.device("0000:3b:00.0", "one", "4-7");
  Sys.device("0000:3c:00.0", "1", "4-x");
  HostTopologyTy T(Sys.root());
  CpuPlacementTy P = T.place("0000:3b:00.0", parsed("0-7"));
  EXPECT_FALSE(P.placed());
  EXPECT_EQ(P.Reason, Sys.root() + "/bus/pci/devices/0000:3b:00.0/numa_node: "
                                   "'one' is not a NUMA node number");
  P = T.place("0000:3c:00.0", parsed("0-7"));
  EXPECT_FALSE(P.placed());
  EXPECT_NE(P.Reason.find(Sys.root() +
                          "/bus/pci/devices/0000:3c:00.0/local_cpulist: "
                          "'4-x' is not a CPU list"),
            std::string::npos)
      << P.Reason;
  Sys.node(2, "8-");
  P = T.place("0000:3c:00.0", parsed("0-7"));
  EXPECT_NE(P.Reason.find("devices/system/node/node2/cpulist: '8-' is not a "
                          "CPU list"),
            std::string::npos)
      << P.Reason;
  EXPECT_NE(T.place("not-an-address", parsed("0-7"))
                .Reason.find("is not a PCI address"),
            std::string::npos);
}

TEST(HostTopologyTest, ReadsNodesAndDeviceFiles) {
  FakeSysfsTy Sys;
  Sys.node(0, "0-3");
  Sys.node(10, "4-7");
  Sys.write("devices/system/node/possible", "0,10\n");
  Sys.write("devices/system/node/nodeX/cpulist", "9\n");
  HostTopologyTy T(Sys.root());
  auto Nodes = T.readNodes();
  ASSERT_TRUE(bool(Nodes)) << llvm::toString(Nodes.takeError());
  ASSERT_EQ(Nodes->size(), 2u);
  EXPECT_EQ(Nodes->at(10).str(), "4-7");
  Sys.write("devices/system/node/node3/meminfo", "");
  Nodes = T.readNodes();
  ASSERT_FALSE(bool(Nodes));
  EXPECT_EQ(llvm::toString(Nodes.takeError()),
            Sys.root() + "/devices/system/node/node3/cpulist: missing");
}

} // namespace

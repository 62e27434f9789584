// SPDX-License-Identifier: Apache-2.0
//
// A fake sysfs tree in a temporary directory, for the tests of the host
// topology (HostTopology.h): NUMA nodes with their CPU lists, PCI devices
// with their node and local CPUs, each file written as the test says,
// malformed ones included.
#ifndef OFFLOADIO_TEST_UNIT_FAKESYSFS_H
#define OFFLOADIO_TEST_UNIT_FAKESYSFS_H

#include "gtest/gtest.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>

namespace offloadio::unittest {

/// A directory tree removed when the object goes.
class FakeSysfsTy {
public:
  FakeSysfsTy() {
    char Template[] = "/tmp/oio-sysfs-XXXXXX";
    const char *Made = ::mkdtemp(Template);
    EXPECT_NE(Made, nullptr);
    Root = Made ? Made : "/nonexistent";
  }
  ~FakeSysfsTy() {
    std::string Command = "rm -rf '" + Root + "'";
    EXPECT_EQ(std::system(Command.c_str()), 0);
  }
  FakeSysfsTy(const FakeSysfsTy &) = delete;
  FakeSysfsTy &operator=(const FakeSysfsTy &) = delete;

  /// Write \p Text to \p Path under the root, making its directories.
  void write(const std::string &Path, const std::string &Text) {
    for (size_t Slash = Path.find('/'); Slash != std::string::npos;
         Slash = Path.find('/', Slash + 1))
      ::mkdir((Root + "/" + Path.substr(0, Slash)).c_str(), 0755);
    std::ofstream Out(Root + "/" + Path);
    Out << Text;
    EXPECT_TRUE(Out.good()) << Path;
  }
  /// NUMA node \p Node with CPUs \p CpuList.
  void node(int Node, const std::string &CpuList) {
    write("devices/system/node/node" + std::to_string(Node) + "/cpulist",
          CpuList + "\n");
  }
  /// PCI device \p Address on node \p NumaNode ("-1", or anything to
  /// write), with local CPUs \p LocalCpus (none written when null).
  void device(const std::string &Address, const std::string &NumaNode,
              const char *LocalCpus) {
    write("bus/pci/devices/" + Address + "/numa_node", NumaNode + "\n");
    if (LocalCpus)
      write("bus/pci/devices/" + Address + "/local_cpulist",
            std::string(LocalCpus) + "\n");
  }

  const std::string &root() const { return Root; }

private:
  std::string Root;
};

} // namespace offloadio::unittest

#endif // OFFLOADIO_TEST_UNIT_FAKESYSFS_H

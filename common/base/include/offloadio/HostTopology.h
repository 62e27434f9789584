// SPDX-License-Identifier: Apache-2.0
//
// Where on the host a device sits: its NUMA node and the CPUs nearest to
// it, from its PCI address in sysfs (<root>/bus/pci/devices/<address>/
// numa_node and local_cpulist, <root>/devices/system/node/node<N>/
// cpulist). The host threads that feed a device (file workers, IOWorker.h)
// run on those CPUs, and the bounce buffers they allocate on first touch
// land on its node. The sysfs root is an argument so that tests read a
// fake tree.
#ifndef OFFLOADIO_HOSTTOPOLOGY_H
#define OFFLOADIO_HOSTTOPOLOGY_H

#include "offloadio/CpuSet.h"
#include "offloadio/Error.h"

#include "llvm/ADT/StringRef.h"

#include <map>
#include <string>

namespace offloadio {

/// Where a device's host threads run: a NUMA node and CPUs, or nowhere in
/// particular, with the reason.
struct CpuPlacementTy {
  /// The device's NUMA node; -1 when unknown.
  int Node = -1;
  /// The CPUs its threads run on; empty: no placement (Reason says why).
  CpuSetTy Cpus;
  /// Why there is no placement; empty when there is one.
  std::string Reason;

  bool placed() const { return !Cpus.empty(); }
  /// "node 1, CPUs 8-15" or "none: <Reason>".
  std::string describe() const;
  /// No placement, because \p Why.
  static CpuPlacementTy none(std::string Why, int Node = -1);
};

/// The host's NUMA nodes and devices as a sysfs tree shows them.
class HostTopologyTy {
public:
  /// Reads the tree under \p SysfsRoot.
  explicit HostTopologyTy(std::string SysfsRoot = "/sys")
      : Root(std::move(SysfsRoot)) {}

  /// \p Address in sysfs's form, "dddd:bb:dd.f" in lower case: any case,
  /// the domain optional (0000 then); an error names it otherwise.
  static Expected<std::string> normalizePCIAddress(llvm::StringRef Address);

  /// The CPUs of each NUMA node (node<N>/cpulist), by node number; empty
  /// when the tree has no node directory (a kernel without NUMA).
  Expected<std::map<int, CpuSetTy>> readNodes() const;
  /// The NUMA node of the PCI device at \p Address (normalized): -1 when
  /// the kernel does not know it (no numa_node file, or -1 in it).
  Expected<int> readDeviceNode(llvm::StringRef Address) const;
  /// The CPUs nearest to the device (local_cpulist); empty when the file
  /// is missing or empty.
  Expected<CpuSetTy> readDeviceCpus(llvm::StringRef Address) const;

  /// Where threads of a process whose CPU mask is \p Mask should run for
  /// the PCI device at \p Address: the device's local CPUs (its node's
  /// CPUs when sysfs gives none) that are in \p Mask. None when the host
  /// has one NUMA node with CPUs, the device's node is unknown, the
  /// intersection is empty, or a file is missing or does not parse (the
  /// reason names it).
  CpuPlacementTy place(llvm::StringRef Address, const CpuSetTy &Mask) const;

  const std::string &getRoot() const { return Root; }

private:
  /// The directory of the PCI device at the normalized \p Address.
  std::string deviceDir(llvm::StringRef Address) const;

  std::string Root;
};

} // namespace offloadio

#endif // OFFLOADIO_HOSTTOPOLOGY_H

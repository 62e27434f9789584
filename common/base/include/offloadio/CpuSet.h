// SPDX-License-Identifier: Apache-2.0
//
// A set of CPU numbers, read from and written as the kernel's cpulist
// syntax ("0-7,16-23", "3", or nothing), as sysfs and
// /proc/<pid>/status (Cpus_allowed_list) give it.
#ifndef OFFLOADIO_CPUSET_H
#define OFFLOADIO_CPUSET_H

#include "offloadio/Error.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace offloadio {

/// CPU numbers, ascending and distinct.
class CpuSetTy {
public:
  CpuSetTy() = default;
  /// The set of \p Cpus, in any order, repeats dropped.
  explicit CpuSetTy(std::vector<unsigned> Cpus);

  /// The most CPUs a list may name: the largest number a kernel built with
  /// CONFIG_NR_CPUS can have, with room to spare.
  static constexpr unsigned MaxCpus = 1u << 16;

  /// Parse \p Text in cpulist syntax: comma-separated numbers and ranges
  /// "A-B" (A <= B), surrounding white space and a final newline allowed,
  /// empty for no CPU. Errors quote the text and name \p Source (a file).
  static Expected<CpuSetTy> parse(llvm::StringRef Text,
                                  llvm::StringRef Source);

  /// The CPUs of both.
  CpuSetTy intersect(const CpuSetTy &Other) const;
  bool contains(unsigned Cpu) const;
  bool empty() const { return Cpus.empty(); }
  size_t size() const { return Cpus.size(); }
  const std::vector<unsigned> &cpus() const { return Cpus; }
  /// In cpulist syntax, ranges folded ("0-3,8"); "" for none.
  std::string str() const;

  bool operator==(const CpuSetTy &Other) const { return Cpus == Other.Cpus; }
  bool operator!=(const CpuSetTy &Other) const { return Cpus != Other.Cpus; }

private:
  std::vector<unsigned> Cpus;
};

} // namespace offloadio

#endif // OFFLOADIO_CPUSET_H

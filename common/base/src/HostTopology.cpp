// SPDX-License-Identifier: Apache-2.0
#include "offloadio/HostTopology.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <optional>
#include <utility>
#include <vector>
#include <unistd.h>

using namespace offloadio;

std::string CpuPlacementTy::describe() const {
  if (!placed())
    return "none: " + Reason;
  return "node " + std::to_string(Node) + ", CPUs " + Cpus.str();
}

CpuPlacementTy CpuPlacementTy::none(std::string Why, int Node) {
  CpuPlacementTy P;
  P.Node = Node;
  P.Reason = std::move(Why);
  return P;
}

/// The contents of \p Path, or std::nullopt when it does not exist (ENOENT,
/// ENOTDIR); other failures are errors that name the file.
static Expected<std::optional<std::string>> readSmallFile(
    const std::string &Path) {
  int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return std::nullopt;
    return makeErrnoError(errno, "open({0})", Path);
  }
  std::string Text;
  char Buf[4096];
  while (true) {
    ssize_t N = ::read(Fd, Buf, sizeof(Buf));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0) {
      int Errno = errno;
      ::close(Fd);
      return makeErrnoError(Errno, "read({0})", Path);
    }
    if (N == 0)
      break;
    Text.append(Buf, size_t(N));
    // sysfs attributes are a page at most: anything longer is not one.
    if (Text.size() > (1 << 20)) {
      ::close(Fd);
      return makeError(ErrorCode::InvalidArgument,
                       "{0}: more than 1 MiB, not a sysfs attribute", Path);
    }
  }
  if (::close(Fd) != 0)
    return makeErrnoError(errno, "close({0})", Path);
  return Text;
}

Expected<std::string>
HostTopologyTy::normalizePCIAddress(llvm::StringRef Address) {
  std::string Lower = Address.trim().lower();
  llvm::StringRef A(Lower);
  llvm::SmallVector<llvm::StringRef, 3> Parts;
  A.split(Parts, ':');
  auto Bad = [&] {
    return makeError(ErrorCode::InvalidArgument,
                     "'{0}' is not a PCI address ([dddd:]bb:dd.f, hex)",
                     Address);
  };
  if (Parts.size() == 2)
    Parts.insert(Parts.begin(), "0000");
  if (Parts.size() != 3)
    return Bad();
  auto [DevText, FnText] = Parts[2].split('.');
  auto IsHex = [](llvm::StringRef S, size_t MaxDigits) {
    return !S.empty() && S.size() <= MaxDigits &&
           llvm::all_of(S, [](char C) { return llvm::isHexDigit(C); });
  };
  unsigned Domain, Bus, Dev, Fn;
  if (!IsHex(Parts[0], 8) || !IsHex(Parts[1], 2) || !IsHex(DevText, 2) ||
      !IsHex(FnText, 1) || Parts[0].getAsInteger(16, Domain) ||
      Parts[1].getAsInteger(16, Bus) || DevText.getAsInteger(16, Dev) ||
      FnText.getAsInteger(16, Fn) || Dev > 0x1f || Fn > 7)
    return Bad();
  return llvm::formatv("{0:x-4}:{1:x-2}:{2:x-2}.{3:x-1}", Domain, Bus, Dev, Fn)
      .str();
}

std::string HostTopologyTy::deviceDir(llvm::StringRef Address) const {
  return Root + "/bus/pci/devices/" + Address.str();
}

Expected<std::map<int, CpuSetTy>> HostTopologyTy::readNodes() const {
  std::map<int, CpuSetTy> Nodes;
  std::string Dir = Root + "/devices/system/node";
  DIR *D = ::opendir(Dir.c_str());
  if (!D) {
    if (errno == ENOENT || errno == ENOTDIR)
      return Nodes;
    return makeErrnoError(errno, "opendir({0})", Dir);
  }
  std::vector<std::pair<int, std::string>> Names;
  while (dirent *E = ::readdir(D)) {
    llvm::StringRef Name(E->d_name);
    int Node;
    if (Name.consume_front("node") && !Name.empty() &&
        llvm::all_of(Name, [](char C) { return C >= '0' && C <= '9'; }) &&
        !Name.getAsInteger(10, Node))
      Names.push_back({Node, E->d_name});
  }
  ::closedir(D);
  for (const auto &[Node, Name] : Names) {
    std::string Path = Dir + "/" + Name + "/cpulist";
    auto Text = readSmallFile(Path);
    if (!Text)
      return Text.takeError();
    if (!*Text)
      return makeError(ErrorCode::NotFound, "{0}: missing", Path);
    auto Cpus = CpuSetTy::parse(**Text, Path);
    if (!Cpus)
      return Cpus.takeError();
    Nodes[Node] = std::move(*Cpus);
  }
  return Nodes;
}

Expected<int> HostTopologyTy::readDeviceNode(llvm::StringRef Address) const {
  std::string Path = deviceDir(Address) + "/numa_node";
  auto Text = readSmallFile(Path);
  if (!Text)
    return Text.takeError();
  if (!*Text)
    return -1;
  int Node;
  if (llvm::StringRef(**Text).trim().getAsInteger(10, Node) || Node < -1)
    return makeError(ErrorCode::InvalidArgument,
                     "{0}: '{1}' is not a NUMA node number", Path,
                     llvm::StringRef(**Text).trim());
  return Node;
}

Expected<CpuSetTy>
HostTopologyTy::readDeviceCpus(llvm::StringRef Address) const {
  std::string Path = deviceDir(Address) + "/local_cpulist";
  auto Text = readSmallFile(Path);
  if (!Text)
    return Text.takeError();
  if (!*Text)
    return CpuSetTy();
  return CpuSetTy::parse(**Text, Path);
}

CpuPlacementTy HostTopologyTy::place(llvm::StringRef Address,
                                     const CpuSetTy &Mask) const {
  auto Normal = normalizePCIAddress(Address);
  if (!Normal)
    return CpuPlacementTy::none(takeErrorMessage(Normal.takeError()));
  auto Nodes = readNodes();
  if (!Nodes)
    return CpuPlacementTy::none(takeErrorMessage(Nodes.takeError()));
  // Nodes of memory alone (CXL, HBM) have no CPUs to run on.
  unsigned WithCpus = 0;
  for (const auto &[Node, Cpus] : *Nodes)
    WithCpus += !Cpus.empty();
  auto Node = readDeviceNode(*Normal);
  if (!Node)
    return CpuPlacementTy::none(takeErrorMessage(Node.takeError()));
  if (WithCpus <= 1)
    return CpuPlacementTy::none("the host has one NUMA node with CPUs",
                                *Node);
  if (*Node < 0)
    return CpuPlacementTy::none("the kernel does not know the NUMA node of " +
                                *Normal);
  auto Local = readDeviceCpus(*Normal);
  if (!Local)
    return CpuPlacementTy::none(takeErrorMessage(Local.takeError()), *Node);
  CpuSetTy Near = std::move(*Local);
  std::string From = "the CPUs local to " + *Normal;
  if (Near.empty()) {
    auto It = Nodes->find(*Node);
    if (It != Nodes->end())
      Near = It->second;
    From = "node " + std::to_string(*Node) + "'s CPUs";
  }
  if (Near.empty())
    return CpuPlacementTy::none(From + " are none", *Node);
  CpuPlacementTy P;
  P.Node = *Node;
  P.Cpus = Near.intersect(Mask);
  if (P.Cpus.empty())
    return CpuPlacementTy::none("the process's CPU mask (" + Mask.str() +
                                    ") holds none of " + From + " (" +
                                    Near.str() + ")",
                                *Node);
  return P;
}

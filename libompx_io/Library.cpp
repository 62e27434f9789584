// SPDX-License-Identifier: Apache-2.0
#include "Library.h"
#include "Diagnostics.h"
#include "InitialDevice.h"
#include "offloadio/CreatorProcess.h"

#include <atomic>
#include <unistd.h>

using namespace ompxio;

namespace {

/// The library's state: the plugins found, the devices resolved, the
/// initial device and the requests in flight.
class LibraryStateTy {
public:
  /// Constructed on first use, after the program registered its offload
  /// images, so destroyed before libomptarget's exit handler unregisters
  /// them and while the plugins still serve requests: the requests never
  /// waited for are finished then (the registry's destructor, which runs
  /// before the directory's).
  ~LibraryStateTy() {
    // A forked child's requests are the parent's (see HandleRegistryTy),
    // and a parent thread may have held the directory's lock at the fork.
    if (!Creator.isCurrent())
      return;
    // Order every device lookup made so far before the lookup table is
    // destroyed: the threads that made them may be synchronised with this
    // one only through libomp, which ThreadSanitizer cannot see.
    Directory.fence();
  }

  /// Declared first, destroyed last: requests point to their plugin.
  PluginDirectoryTy Directory;
  InitialDeviceTy Initial;
  RequestRegistryTy Requests{"request(s)", finishLeftRequest};
  /// Set once the process was told that offload-io serves a device not.
  std::atomic<bool> NotServedWarned{false};

private:
  /// The process that created this state.
  offloadio::CreatorProcessTy Creator;
};

/// The library's one instance.
LibraryStateTy &state() {
  static LibraryStateTy State;
  return State;
}

} // namespace

bool ompxio::resolveDevice(int Device, DeviceRefTy &Ref) {
  return Device >= 0 && state().Directory.resolve(Device, Ref);
}

const PluginTy *ompxio::anyPlugin() { return state().Directory.anyPlugin(); }

int ompxio::initialDeviceNumber() { return state().Initial.number(); }

offloadio::SysTy &ompxio::librarySys() { return state().Initial.sys(); }

HostOutcomeTy ompxio::countedHostTransfer(
    const offloadio::DescriptorFactsTy &Facts, bool IsWrite, void *Buf,
    size_t Count, off_t Offset, int Device) {
  return state().Initial.transfer(Facts, IsWrite, Buf, Count, Offset, Device);
}

void ompxio::initialDeviceStats(ompx_io_stats_t &Out) {
  state().Initial.stats(Out);
}

RequestRegistryTy &ompxio::requestRegistry() { return state().Requests; }

std::string ompxio::notServedMessage(const char *Call,
                                     std::optional<int> Device) {
  return explainNotServed(Call, Device, state().NotServedWarned);
}

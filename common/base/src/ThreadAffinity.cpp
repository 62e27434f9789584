// SPDX-License-Identifier: Apache-2.0
#include "offloadio/ThreadAffinity.h"
#include "offloadio/Info.h"

#include <cerrno>
#include <cstring>
#include <sched.h>

using namespace offloadio;

AffinitySysTy::~AffinitySysTy() = default;

int AffinitySysTy::getThreadAffinity(CpuSetTy &Cpus) {
  // The kernel's mask may be wider than the configured CPUs (hot-plug,
  // cgroups): grow the set until the kernel's fits.
  for (size_t Size = 1024; Size <= CpuSetTy::MaxCpus; Size *= 2) {
    cpu_set_t *Set = CPU_ALLOC(Size);
    if (!Set)
      return ENOMEM;
    size_t Bytes = CPU_ALLOC_SIZE(Size);
    CPU_ZERO_S(Bytes, Set);
    int Result = ::sched_getaffinity(0, Bytes, Set);
    int Errno = errno;
    if (Result == 0) {
      std::vector<unsigned> List;
      for (size_t Cpu = 0; Cpu < Size; ++Cpu)
        if (CPU_ISSET_S(Cpu, Bytes, Set))
          List.push_back(unsigned(Cpu));
      Cpus = CpuSetTy(std::move(List));
    }
    CPU_FREE(Set);
    if (Result == 0)
      return 0;
    if (Errno != EINVAL)
      return Errno;
  }
  return EINVAL;
}

int AffinitySysTy::setThreadAffinity(const CpuSetTy &Cpus) {
  if (Cpus.empty())
    return EINVAL;
  size_t Size = size_t(Cpus.cpus().back()) + 1;
  cpu_set_t *Set = CPU_ALLOC(Size);
  if (!Set)
    return ENOMEM;
  size_t Bytes = CPU_ALLOC_SIZE(Size);
  CPU_ZERO_S(Bytes, Set);
  for (unsigned Cpu : Cpus.cpus())
    CPU_SET_S(Cpu, Bytes, Set);
  int Result = ::sched_setaffinity(0, Bytes, Set);
  int Errno = errno;
  CPU_FREE(Set);
  return Result == 0 ? 0 : Errno;
}

void DevicePlacementTy::set(CpuPlacementTy NewPlacement, const InfoTy *NewInfo,
                            int32_t NewDeviceId) {
  Placement = std::move(NewPlacement);
  Info = NewInfo;
  DeviceId = NewDeviceId;
  Stopped.store(false, std::memory_order_relaxed);
}

void DevicePlacementTy::fail(int Errno, llvm::StringRef Call) {
  if (Stopped.exchange(true, std::memory_order_relaxed))
    return;
  if (Info)
    Info->print(~0u, DeviceId,
                "host threads no longer placed near the device ({0}): {1} "
                "failed: {2}",
                Placement.describe(), Call, std::strerror(Errno));
}

void ThreadPlacementTy::enter(DevicePlacementTy *Device) {
  const CpuSetTy *Want = Device ? Device->cpus() : nullptr;
  if (!Want) {
    if (!Current)
      return;
    // Back to the mask the thread started with. A failure leaves it where
    // it is: it is reported (on the device entered, the one that wants
    // the thread's own mask) and not tried again until the next move.
    if (int Errno = Sys.setThreadAffinity(*Original))
      if (Device)
        Device->fail(Errno, "sched_setaffinity(" + Original->str() +
                                ") back to the thread's own CPUs");
    Current.reset();
    return;
  }
  if (Current && *Current == *Want)
    return;
  if (!Original) {
    CpuSetTy Mask;
    if (int Errno = Sys.getThreadAffinity(Mask)) {
      Device->fail(Errno, "sched_getaffinity");
      return;
    }
    Original = std::move(Mask);
  }
  // A failed call leaves the thread's mask as it was.
  if (int Errno = Sys.setThreadAffinity(*Want)) {
    Device->fail(Errno, "sched_setaffinity(" + Want->str() + ")");
    return;
  }
  Current = *Want;
}

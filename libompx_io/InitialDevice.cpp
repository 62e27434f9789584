// SPDX-License-Identifier: Apache-2.0
#include "InitialDevice.h"
#include "PluginDirectory.h"

using namespace ompxio;

int InitialDeviceTy::number() {
  using FnTy = int (*)();
  auto *Fn = reinterpret_cast<FnTy>(processSymbol("omp_get_initial_device"));
  return Fn ? Fn() : -1;
}

HostOutcomeTy InitialDeviceTy::transfer(
    const offloadio::DescriptorFactsTy &Facts, bool IsWrite, void *Buf,
    size_t Count, off_t Offset, int Device) {
  HostOutcomeTy Out =
      runHostTransfer(Sys, Facts, IsWrite, Buf, Count, Offset, Device);
  if (!Out.Refused) {
    Requests[IsWrite].fetch_add(1, std::memory_order_relaxed);
    if (Out.Result > 0)
      Bytes[IsWrite].fetch_add(uint64_t(Out.Result),
                               std::memory_order_relaxed);
  }
  return Out;
}

void InitialDeviceTy::stats(ompx_io_stats_t &Out) const {
  Out = ompx_io_stats_t();
  Out.bytes_read[OMPX_IO_PATH_HOST] = Bytes[0].load();
  Out.bytes_written[OMPX_IO_PATH_HOST] = Bytes[1].load();
  Out.reads[OMPX_IO_PATH_HOST] = Requests[0].load();
  Out.writes[OMPX_IO_PATH_HOST] = Requests[1].load();
}

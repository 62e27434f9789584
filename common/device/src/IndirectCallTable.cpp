// SPDX-License-Identifier: Apache-2.0
//
// The table of indirectly callable functions (declare target indirect)
// that libomptarget 18's device runtime searches when the program calls
// through a host function pointer on the device: one {host address,
// device address} pair per flagged entry, sorted by host address, in
// device memory, its address and length in the device environment. Each
// pair's device address is the value of the entry's global in the image.
#include "offloadio/ABI.h"
#include "offloadio/Device.h"
#include "offloadio/DeviceRuntimeABI.h"

#include "llvm/ADT/STLExtras.h"

#include <utility>
#include <vector>

using namespace offloadio;
using llvm::Error;

Error GenericDeviceTy::setUpIndirectCallTable(
    DeviceImageTy &Image, const __tgt_device_image &TgtImage) {
  if (!Services.RuntimeABI.takesIndirectCallTable())
    return Error::success();
  std::vector<std::pair<void *, void *>> Table;
  for (const __tgt_offload_entry *E = TgtImage.EntriesBegin;
       E != TgtImage.EntriesEnd; ++E) {
    if (E->size == 0 || !(E->flags & OMP_DECLARE_TARGET_INDIRECT))
      continue;
    if (!E->name || E->size != sizeof(void *))
      return makeError(ErrorCode::InvalidImage,
                       "image {0} on device {1}: the indirect entry '{2}' "
                       "has {3} bytes, not a function pointer's {4}",
                       Image.getId(), DeviceId, E->name ? E->name : "",
                       E->size, sizeof(void *));
    auto Global = getGlobalAddressImpl(Image, E->name, E->size);
    if (!Global)
      return Global.takeError();
    void *DevicePtr = nullptr;
    if (auto Err = dataRetrieve(&DevicePtr, *Global, sizeof(DevicePtr),
                                /*AsyncInfo=*/nullptr))
      return Err;
    Table.emplace_back(E->addr, DevicePtr);
  }
  if (Table.empty())
    return Error::success();
  // The device runtime looks host addresses up by binary search.
  llvm::sort(Table, [](const auto &L, const auto &R) {
    return std::less<void *>()(L.first, R.first);
  });
  size_t Bytes = Table.size() * sizeof(Table[0]);
  auto Memory = allocateMemory(Bytes, AllocKindTy::Device);
  if (!Memory)
    return Memory.takeError();
  Image.IndirectCallTable = *Memory;
  Image.IndirectCallTableSize = Table.size();
  if (auto Err = dataSubmit(Image.IndirectCallTable, Table.data(),
                            int64_t(Bytes), /*AsyncInfo=*/nullptr))
    return Err;
  Services.Info.print(InfoPluginKernel, DeviceId,
                      "image {0}: {1} indirectly callable functions, table "
                      "at {2}",
                      Image.getId(), Table.size(), Image.IndirectCallTable);
  return Error::success();
}

Error GenericDeviceTy::freeImageMemory(DeviceImageTy &Image) {
  Error Err = Error::success();
  for (void **Memory : {&Image.DeviceMemoryPool, &Image.IndirectCallTable})
    if (*Memory)
      Err = llvm::joinErrors(std::move(Err),
                             freeMemory(std::exchange(*Memory, nullptr)));
  Image.IndirectCallTableSize = 0;
  return Err;
}

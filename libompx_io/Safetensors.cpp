// SPDX-License-Identifier: Apache-2.0
//
// The C API of ompx_safetensors.h over CheckpointTy: opening, the lists,
// loading any subset of the tensors into device buffers with one ompx_io
// batch, and loading onto several devices into memory it allocates
// (PlacementTy, placed by SafetensorsSplit.h).
#include "CallFailure.h"
#include "Diagnostics.h"
#include "Library.h"
#include "SafetensorsCheckpoint.h"
#include "SafetensorsPlacement.h"
#include "SafetensorsSplit.h"
#include "ompx_io.h"
#include "ompx_safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace ompxio;
using safetensors::CheckpointFileTy;
using safetensors::CheckpointTy;
using safetensors::DeviceMemoryTy;
using safetensors::DeviceNumbersTy;
using safetensors::PlacedTensorTy;
using safetensors::PlacementTy;
using safetensors::TensorInfoTy;

/// The handle: the checkpoint behind the opaque type of the header.
struct ompx_safetensors {
  std::unique_ptr<CheckpointTy> Checkpoint;
};

/// The handle: a placement behind the opaque type of the header.
struct ompx_safetensors_placement {
  explicit ompx_safetensors_placement(DeviceMemoryTy Memory)
      : Placement(Memory) {}
  PlacementTy Placement;
};

namespace {

/// Failures of ompx_safetensors_load named in its message.
constexpr size_t MaxNamedFailures = 8;

const CheckpointFileTy *fileOf(ompx_safetensors_t Handle, size_t File) {
  if (!Handle || File >= Handle->Checkpoint->files().size())
    return nullptr;
  return Handle->Checkpoint->files()[File].get();
}

std::string tensorMessage(const CheckpointTy &C, size_t Index) {
  return "tensor '" + safetensors::shownText(C.tensor(Index).Name) +
         "' of " + C.fileOf(Index).Path;
}

/// One entry of a load that failed before the batch, or in it.
struct FailureTy {
  size_t Entry;
  std::string Reason;
};

} // namespace

OMPX_API const char *ompx_safetensors_dtype_name(int DType) {
  auto Known = safetensors::dtypeFromNumber(DType);
  // The table's names are literals: NUL-terminated.
  return Known ? safetensors::dtypeName(*Known).data() : nullptr;
}

OMPX_API size_t ompx_safetensors_dtype_size(int DType) {
  auto Known = safetensors::dtypeFromNumber(DType);
  return Known ? safetensors::dtypeSize(*Known) : 0;
}

OMPX_API int ompx_safetensors_open(const char *Path,
                                   ompx_safetensors_t *Checkpoint) {
  const char *Call = "ompx_safetensors_open";
  if (Checkpoint)
    *Checkpoint = nullptr;
  if (!Path)
    return invalidArgument(Call, "path is NULL");
  if (!Checkpoint)
    return invalidArgument(Call, "checkpoint is NULL");
  auto *Handle = new (std::nothrow) ompx_safetensors;
  if (!Handle)
    return fail(ENOMEM, std::string(Call) + ": out of memory");
  safetensors::ErrorTy Err = CheckpointTy::open(Path, Handle->Checkpoint);
  if (Err) {
    delete Handle;
    return fail(Err.Errno, std::string(Call) + ": " + Err.Message);
  }
  *Checkpoint = Handle;
  return 0;
}

OMPX_API int ompx_safetensors_close(ompx_safetensors_t Checkpoint) {
  if (!Checkpoint)
    return invalidArgument("ompx_safetensors_close", "checkpoint is NULL");
  delete Checkpoint;
  return 0;
}

OMPX_API size_t ompx_safetensors_num_files(ompx_safetensors_t Checkpoint) {
  return Checkpoint ? Checkpoint->Checkpoint->files().size() : 0;
}

OMPX_API const char *ompx_safetensors_file_path(ompx_safetensors_t Checkpoint,
                                                size_t File) {
  const CheckpointFileTy *F = fileOf(Checkpoint, File);
  if (!F) {
    invalidArgument("ompx_safetensors_file_path",
                    Checkpoint ? "file out of range" : "checkpoint is NULL");
    return nullptr;
  }
  return F->Path.c_str();
}

OMPX_API int64_t ompx_safetensors_header_bytes(ompx_safetensors_t Checkpoint,
                                               size_t File) {
  const CheckpointFileTy *F = fileOf(Checkpoint, File);
  if (!F)
    return invalidArgument("ompx_safetensors_header_bytes",
                           Checkpoint ? "file out of range"
                                      : "checkpoint is NULL");
  return int64_t(F->Header.HeaderLength);
}

OMPX_API size_t ompx_safetensors_num_metadata(ompx_safetensors_t Checkpoint,
                                              size_t File) {
  const CheckpointFileTy *F = fileOf(Checkpoint, File);
  return F ? F->Header.Metadata.size() : 0;
}

OMPX_API int ompx_safetensors_metadata(ompx_safetensors_t Checkpoint,
                                       size_t File, size_t Index,
                                       const char **Key, const char **Value) {
  const char *Call = "ompx_safetensors_metadata";
  const CheckpointFileTy *F = fileOf(Checkpoint, File);
  if (!F)
    return invalidArgument(Call, Checkpoint ? "file out of range"
                                            : "checkpoint is NULL");
  if (Index >= F->Header.Metadata.size())
    return invalidArgument(Call, "index out of range");
  if (Key)
    *Key = F->Header.Metadata[Index].first.c_str();
  if (Value)
    *Value = F->Header.Metadata[Index].second.c_str();
  return 0;
}

OMPX_API size_t ompx_safetensors_num_tensors(ompx_safetensors_t Checkpoint) {
  return Checkpoint ? Checkpoint->Checkpoint->tensors().size() : 0;
}

OMPX_API int ompx_safetensors_tensor(ompx_safetensors_t Checkpoint,
                                     size_t Index,
                                     ompx_safetensors_tensor_t *Tensor) {
  const char *Call = "ompx_safetensors_tensor";
  if (!Checkpoint || !Tensor)
    return invalidArgument(Call, !Checkpoint ? "checkpoint is NULL"
                                             : "tensor is NULL");
  const CheckpointTy &C = *Checkpoint->Checkpoint;
  if (Index >= C.tensors().size())
    return invalidArgument(Call, "index out of range");
  const TensorInfoTy &T = C.tensor(Index);
  Tensor->name = T.Name.c_str();
  Tensor->dtype = static_cast<int>(T.DType);
  Tensor->ndim = T.Shape.size();
  Tensor->shape = T.Shape.data();
  Tensor->nbytes = T.bytes();
  Tensor->data_begin = T.Begin;
  Tensor->data_end = T.End;
  Tensor->file_offset = C.fileOf(Index).Header.dataOffset() + T.Begin;
  Tensor->file = C.tensors()[Index].File;
  return 0;
}

OMPX_API ssize_t ompx_safetensors_find(ompx_safetensors_t Checkpoint,
                                       const char *Name) {
  const char *Call = "ompx_safetensors_find";
  if (!Checkpoint || !Name)
    return invalidArgument(Call, !Checkpoint ? "checkpoint is NULL"
                                             : "name is NULL");
  std::optional<size_t> Index = Checkpoint->Checkpoint->find(Name);
  if (!Index)
    return fail(ENOENT, std::string(Call) + ": no tensor '" +
                            safetensors::shownText(Name) + "'");
  return ssize_t(*Index);
}

namespace {

/// ompx_safetensors_load of \p C's tensors for \p Call, its arguments
/// checked.
ssize_t loadTensors(const char *Call, const CheckpointTy &C,
                    ompx_safetensors_load_t *Loads, size_t NumLoads) {
  std::vector<FailureTy> Failures;
  auto refuse = [&](size_t Entry, int Errno, std::string Reason) {
    Loads[Entry].result = -1;
    Loads[Entry].error = Errno;
    Failures.push_back({Entry, std::move(Reason)});
  };
  // The batch's operations and the entry and tensor of each.
  std::vector<ompx_io_op_t> Ops;
  std::vector<std::pair<size_t, size_t>> OpEntry;
  for (size_t E = 0; E < NumLoads; ++E) {
    ompx_safetensors_load_t &L = Loads[E];
    size_t Index = L.index;
    if (L.name) {
      std::optional<size_t> Found = C.find(L.name);
      if (!Found) {
        refuse(E, ENOENT, "tensor '" + safetensors::shownText(L.name) +
                              "': not in the checkpoint");
        continue;
      }
      Index = *Found;
    } else if (Index >= C.tensors().size()) {
      refuse(E, EINVAL, "tensor number " + std::to_string(Index) +
                            ": out of range (" +
                            std::to_string(C.tensors().size()) + " tensors)");
      continue;
    }
    const TensorInfoTy &T = C.tensor(Index);
    if (T.bytes() == 0) {
      L.result = 0;
      L.error = 0;
      continue;
    }
    if (!L.device_buf || L.buf_size < T.bytes()) {
      refuse(E, EINVAL,
             tensorMessage(C, Index) + ": " + std::to_string(T.bytes()) +
                 " bytes, but the buffer " +
                 (L.device_buf ? "holds " + std::to_string(L.buf_size)
                               : std::string("is NULL")));
      continue;
    }
    ompx_io_op_t Op;
    std::memset(&Op, 0, sizeof(Op));
    Op.opcode = OMPX_IO_OP_READ;
    Op.fd = C.fileOf(Index).Fd;
    Op.device_buf = L.device_buf;
    Op.count = T.bytes();
    Op.offset = off_t(C.fileOf(Index).Header.dataOffset() + T.Begin);
    Op.device_num = L.device_num;
    Ops.push_back(Op);
    OpEntry.push_back({E, Index});
  }
  if (!Ops.empty()) {
    ompx_io_batch_t Batch = nullptr;
    if (ompx_io_batch_submit(Ops.data(), Ops.size(), &Batch) != 0) {
      int Errno = errno;
      return fail(Errno, std::string(Call) + ": " + ompx_io_last_error());
    }
    if (ompx_io_batch_wait(Batch) < 0) {
      int Errno = errno;
      return fail(Errno, std::string(Call) + ": " + ompx_io_last_error());
    }
    for (size_t I = 0; I < Ops.size(); ++I) {
      const ompx_io_op_t &Op = Ops[I];
      auto [E, Index] = OpEntry[I];
      if (Op.result == ssize_t(Op.count)) {
        Loads[E].result = Op.result;
        Loads[E].error = 0;
        continue;
      }
      // A short read: the file ended before the tensor, so it changed
      // since its header was read.
      int Errno = Op.result < 0 ? Op.error : EIO;
      std::string Why = Op.result < 0
                            ? std::string(std::strerror(Errno))
                            : "the file ends after " +
                                  std::to_string(Op.result) + " of its bytes";
      refuse(E, Errno,
             tensorMessage(C, Index) + " (" + std::to_string(Op.count) +
                 " bytes at offset " + std::to_string(Op.offset) +
                 " into device " + std::to_string(Op.device_num) + "): " +
                 Why);
    }
  }
  if (Failures.empty())
    return 0;
  std::sort(Failures.begin(), Failures.end(),
            [](const FailureTy &A, const FailureTy &B) {
              return A.Entry < B.Entry;
            });
  std::string Message = std::string(Call) + ": " +
                        std::to_string(Failures.size()) + " of " +
                        std::to_string(NumLoads) + " tensors failed: ";
  for (size_t I = 0; I < Failures.size() && I < MaxNamedFailures; ++I)
    Message += (I ? "; " : "") + std::string("entry ") +
               std::to_string(Failures[I].Entry) + ": " + Failures[I].Reason;
  if (Failures.size() > MaxNamedFailures)
    Message += "; and " +
               std::to_string(Failures.size() - MaxNamedFailures) + " more";
  fail(Loads[Failures.front().Entry].error, std::move(Message));
  return ssize_t(Failures.size());
}

} // namespace

OMPX_API ssize_t ompx_safetensors_load(ompx_safetensors_t Checkpoint,
                                       ompx_safetensors_load_t *Loads,
                                       size_t NumLoads) {
  const char *Call = "ompx_safetensors_load";
  if (!Checkpoint)
    return invalidArgument(Call, "checkpoint is NULL");
  if (!Loads && NumLoads)
    return invalidArgument(Call, "loads is NULL");
  return loadTensors(Call, *Checkpoint->Checkpoint, Loads, NumLoads);
}

namespace {

/// The program's omp_target_alloc and omp_target_free: libompx_io links no
/// OpenMP runtime, so the program's libomptarget serves them, as it serves
/// omp_get_initial_device (InitialDevice.cpp).
DeviceMemoryTy openmpDeviceMemory() {
  DeviceMemoryTy Memory;
  Memory.Alloc = reinterpret_cast<void *(*)(size_t, int)>(
      processSymbol("omp_target_alloc"));
  Memory.Free =
      reinterpret_cast<void (*)(void *, int)>(processSymbol("omp_target_free"));
  return Memory;
}

/// The device numbers of the running program.
DeviceNumbersTy openmpDeviceNumbers() {
  auto *NumDevices =
      reinterpret_cast<int (*)()>(processSymbol("omp_get_num_devices"));
  DeviceNumbersTy Numbers;
  Numbers.NumDevices = NumDevices ? NumDevices() : 0;
  Numbers.Initial = initialDeviceNumber();
  return Numbers;
}

/// The numbers of the tensors \p Names names (every tensor when it is
/// NULL) into \p Indices; fails \p Call for a NULL, unknown or repeated
/// name.
int selectTensors(const char *Call, const CheckpointTy &C,
                  const char *const *Names, size_t NumNames,
                  std::vector<size_t> &Indices) {
  if (!Names) {
    Indices.resize(C.tensors().size());
    std::iota(Indices.begin(), Indices.end(), size_t(0));
    return 0;
  }
  std::vector<bool> Named(C.tensors().size(), false);
  for (size_t I = 0; I < NumNames; ++I) {
    std::string Entry = "names[" + std::to_string(I) + "]";
    if (!Names[I])
      return fail(EINVAL, std::string(Call) + ": " + Entry + " is NULL");
    std::optional<size_t> Found = C.find(Names[I]);
    if (!Found)
      return fail(ENOENT, std::string(Call) + ": " + Entry + ": tensor '" +
                              safetensors::shownText(Names[I]) +
                              "': not in the checkpoint");
    if (Named[*Found])
      return fail(EINVAL, std::string(Call) + ": " + Entry + ": " +
                              tensorMessage(C, *Found) + " is named twice");
    Named[*Found] = true;
    Indices.push_back(*Found);
  }
  return 0;
}

/// Allocates the tensors \p Indices of \p C on the devices \p DeviceOf
/// (by position) and loads them with one batch; all or nothing.
int placeAndLoad(const char *Call, const CheckpointTy &C,
                 const std::vector<size_t> &Indices,
                 const std::vector<int> &DeviceOf,
                 const DeviceNumbersTy &Numbers,
                 ompx_safetensors_placement_t *Placement) {
  // Every device is checked before anything is allocated.
  std::set<int> Served;
  for (size_t I = 0; I < Indices.size(); ++I) {
    int Device = DeviceOf[I];
    DeviceRefTy Ref;
    if (Device == Numbers.Initial || Served.count(Device))
      continue;
    if (!resolveDevice(Device, Ref))
      return fail(ENODEV, notServedMessage(Call, Device) + " (" +
                              tensorMessage(C, Indices[I]) +
                              " was to be loaded there)");
    Served.insert(Device);
  }
  DeviceMemoryTy Memory = openmpDeviceMemory();
  if (!Memory.Alloc || !Memory.Free)
    return fail(ENODEV, std::string(Call) +
                            ": the program has no omp_target_alloc and "
                            "omp_target_free: no OpenMP offload runtime is "
                            "loaded");
  std::unique_ptr<ompx_safetensors_placement> Handle(
      new (std::nothrow) ompx_safetensors_placement(Memory));
  if (!Handle)
    return fail(ENOMEM, std::string(Call) + ": out of memory");
  for (size_t I = 0; I < Indices.size(); ++I) {
    PlacedTensorTy T;
    T.Name = C.tensor(Indices[I]).Name;
    T.File = C.fileOf(Indices[I]).Path;
    T.Index = Indices[I];
    T.Device = DeviceOf[I];
    T.Bytes = C.tensor(Indices[I]).bytes();
    Handle->Placement.add(std::move(T));
  }
  if (safetensors::ErrorTy Err = Handle->Placement.allocate())
    return fail(Err.Errno, std::string(Call) + ": " + Err.Message);
  std::vector<ompx_safetensors_load_t> Loads(Indices.size());
  for (size_t I = 0; I < Indices.size(); ++I) {
    const PlacedTensorTy &T = Handle->Placement.tensors()[I];
    ompx_safetensors_load_t &L = Loads[I];
    std::memset(&L, 0, sizeof(L));
    L.index = T.Index;
    L.device_buf = T.Ptr;
    L.buf_size = size_t(T.Bytes);
    L.device_num = T.Device;
  }
  if (loadTensors(Call, C, Loads.data(), Loads.size()) != 0) {
    // The message is loadTensors'; freeing keeps errno.
    int Errno = errno;
    Handle.reset();
    errno = Errno;
    return -1;
  }
  *Placement = Handle.release();
  return 0;
}

/// The arguments both placing loads check first; 0, or -1 with errno
/// EINVAL. *Placement is NULL from here on until a load succeeds.
int checkPlacementCall(const char *Call, ompx_safetensors_t Checkpoint,
                       const char *const *Names, size_t NumNames,
                       ompx_safetensors_placement_t *Placement) {
  if (Placement)
    *Placement = nullptr;
  if (!Checkpoint)
    return invalidArgument(Call, "checkpoint is NULL");
  if (!Placement)
    return invalidArgument(Call, "placement is NULL");
  if (!Names && NumNames)
    return invalidArgument(Call, "names is NULL");
  return 0;
}

} // namespace

OMPX_API int ompx_safetensors_load_split(ompx_safetensors_t Checkpoint,
                                         const char *const *Names,
                                         size_t NumNames, const int *Devices,
                                         size_t NumDevices,
                                         ompx_safetensors_placement_t *Placement) {
  const char *Call = "ompx_safetensors_load_split";
  if (checkPlacementCall(Call, Checkpoint, Names, NumNames, Placement) != 0)
    return -1;
  const CheckpointTy &C = *Checkpoint->Checkpoint;
  DeviceNumbersTy Numbers = openmpDeviceNumbers();
  if (std::optional<std::string> Why =
          safetensors::checkDeviceList(Devices, NumDevices, Numbers))
    return fail(EINVAL, std::string(Call) + ": " + *Why);
  std::vector<size_t> Indices;
  if (selectTensors(Call, C, Names, NumNames, Indices) != 0)
    return -1;
  std::vector<uint64_t> Bytes;
  for (size_t Index : Indices)
    Bytes.push_back(C.tensor(Index).bytes());
  return placeAndLoad(Call, C, Indices,
                      safetensors::splitEvenly(Bytes, Devices, NumDevices),
                      Numbers, Placement);
}

OMPX_API int ompx_safetensors_load_mapped(ompx_safetensors_t Checkpoint,
                                          const char *const *Names,
                                          size_t NumNames,
                                          const int *DeviceMap,
                                          ompx_safetensors_placement_t *Placement) {
  const char *Call = "ompx_safetensors_load_mapped";
  if (checkPlacementCall(Call, Checkpoint, Names, NumNames, Placement) != 0)
    return -1;
  const CheckpointTy &C = *Checkpoint->Checkpoint;
  std::vector<size_t> Indices;
  if (selectTensors(Call, C, Names, NumNames, Indices) != 0)
    return -1;
  if (!DeviceMap && !Indices.empty())
    return invalidArgument(Call, "device_map is NULL");
  DeviceNumbersTy Numbers = openmpDeviceNumbers();
  if (std::optional<size_t> Bad = safetensors::firstMissingDevice(
          DeviceMap, Indices.size(), Numbers))
    return fail(EINVAL, std::string(Call) + ": device_map[" +
                            std::to_string(*Bad) + "]: " +
                            tensorMessage(C, Indices[*Bad]) + ": " +
                            Numbers.missing(DeviceMap[*Bad]));
  std::vector<int> DeviceOf(DeviceMap, DeviceMap + Indices.size());
  return placeAndLoad(Call, C, Indices, DeviceOf, Numbers, Placement);
}

OMPX_API size_t
ompx_safetensors_placement_count(ompx_safetensors_placement_t Placement) {
  return Placement ? Placement->Placement.tensors().size() : 0;
}

OMPX_API int
ompx_safetensors_placement_tensor(ompx_safetensors_placement_t Placement,
                                  size_t Index,
                                  ompx_safetensors_placed_t *Placed) {
  const char *Call = "ompx_safetensors_placement_tensor";
  if (!Placement || !Placed)
    return invalidArgument(Call, !Placement ? "placement is NULL"
                                            : "placed is NULL");
  const std::vector<PlacedTensorTy> &Tensors = Placement->Placement.tensors();
  if (Index >= Tensors.size())
    return invalidArgument(Call, "index out of range");
  const PlacedTensorTy &T = Tensors[Index];
  Placed->name = T.Name.c_str();
  Placed->index = T.Index;
  Placed->device_num = T.Device;
  Placed->device_ptr = T.Ptr;
  Placed->nbytes = T.Bytes;
  return 0;
}

OMPX_API ssize_t
ompx_safetensors_placement_find(ompx_safetensors_placement_t Placement,
                                const char *Name) {
  const char *Call = "ompx_safetensors_placement_find";
  if (!Placement || !Name)
    return invalidArgument(Call, !Placement ? "placement is NULL"
                                            : "name is NULL");
  std::optional<size_t> Index = Placement->Placement.find(Name);
  if (!Index)
    return fail(ENOENT, std::string(Call) + ": no tensor '" +
                            safetensors::shownText(Name) + "'");
  return ssize_t(*Index);
}

OMPX_API int
ompx_safetensors_placement_free(ompx_safetensors_placement_t Placement) {
  if (!Placement)
    return invalidArgument("ompx_safetensors_placement_free",
                           "placement is NULL");
  delete Placement;
  return 0;
}

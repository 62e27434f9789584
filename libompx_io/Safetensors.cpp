// SPDX-License-Identifier: Apache-2.0
//
// The C API of ompx_safetensors.h over CheckpointTy: opening, the lists,
// and loading any subset of the tensors into device buffers with one
// ompx_io batch.
#include "CallFailure.h"
#include "Diagnostics.h"
#include "Library.h"
#include "SafetensorsCheckpoint.h"
#include "ompx_io.h"
#include "ompx_safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

using namespace ompxio;
using safetensors::CheckpointFileTy;
using safetensors::CheckpointTy;
using safetensors::TensorInfoTy;

/// The handle: the checkpoint behind the opaque type of the header.
struct ompx_safetensors {
  std::unique_ptr<CheckpointTy> Checkpoint;
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

OMPX_API ssize_t ompx_safetensors_load(ompx_safetensors_t Checkpoint,
                                       ompx_safetensors_load_t *Loads,
                                       size_t NumLoads) {
  const char *Call = "ompx_safetensors_load";
  if (!Checkpoint)
    return invalidArgument(Call, "checkpoint is NULL");
  if (!Loads && NumLoads)
    return invalidArgument(Call, "loads is NULL");
  const CheckpointTy &C = *Checkpoint->Checkpoint;
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

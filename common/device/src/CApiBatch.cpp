// SPDX-License-Identifier: Apache-2.0
//
// The batch extensions of the file engine (__tgt_rtl_ompx_io_batch_*,
// offloadio/ExtensionABI.h): one device's share of an ompx_io_batch_submit.
// libompx_io creates a share on every device of a batch first, so that a
// device without a request left refuses the batch before anything starts.
#include "offloadio/CApiSupport.h"
#include "offloadio/Device.h"
#include "offloadio/ExtensionABI.h"
#include "offloadio/Plugin.h"
#include "offloadio/io/IOEngine.h"

#include <cerrno>
#include <cstdio>
#include <memory>
#include <vector>

using namespace offloadio;

// Extension calls: reached through the table (CApiExtensionTable.cpp), not
// exported.

namespace {

/// What the handle of a share points to: the share and, once waited for,
/// the outcome of each operation.
struct BatchHandleTy {
  std::unique_ptr<IOBatchTy> Batch;
  std::vector<IOBatchResultTy> Results;
};

BatchHandleTy &handleOf(void *Batch) {
  return *static_cast<BatchHandleTy *>(Batch);
}

/// The file engine of local device \p DeviceId.
Expected<IOEngineTy &> engineOf(int32_t DeviceId) {
  auto Device = thePlugin().getDevice(DeviceId);
  if (!Device)
    return Device.takeError();
  return thePlugin().getIOEngine(*Device);
}

} // namespace

OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_io_batch_create(int32_t DeviceId,
                                                     void **Batch) {
  auto Engine = engineOf(DeviceId);
  if (!Engine)
    return extensionErrno(Engine.takeError(), DeviceId);
  auto Share = Engine->createBatch();
  if (!Share)
    return extensionErrno(Share.takeError(), DeviceId);
  *Batch = new BatchHandleTy{std::move(*Share), {}};
  return 0;
}

OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_io_batch_start(int32_t DeviceId,
                                                    void *Batch,
                                                    const ompx_io_op_t *Ops,
                                                    uint64_t Count) {
  auto Engine = engineOf(DeviceId);
  if (!Engine)
    return extensionErrno(Engine.takeError(), DeviceId);
  std::vector<IOBatchOpTy> EngineOps;
  EngineOps.reserve(Count);
  for (uint64_t I = 0; I < Count; ++I) {
    const ompx_io_op_t &Op = Ops[I];
    EngineOps.push_back({Op.opcode == OMPX_IO_OP_WRITE ? IORequestTy::Write
                                                        : IORequestTy::Read,
                         Op.fd, Op.device_buf, Op.count, Op.offset});
  }
  Engine->startBatch(*handleOf(Batch).Batch, EngineOps);
  return 0;
}

OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_io_batch_test(void *Batch) {
  // A share inherited from the parent never progresses here: "done", so
  // that the wait that follows reports the error (as __tgt_rtl_ompx_io_test).
  if (thePlugin().inForkedChild())
    return 1;
  return handleOf(Batch).Batch->isDone();
}

OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_io_batch_notify(void *Batch,
                                                     void (*Fn)(void *),
                                                     void *Arg) {
  // A share inherited from the parent never completes here.
  if (thePlugin().inForkedChild())
    return extensionErrno(
        thePlugin().makeForkedError("an ompx_io batch"), -1);
  if (auto Err = handleOf(Batch).Batch->notifyWhenDone({Fn, Arg}))
    return extensionErrno(std::move(Err), -1);
  return 0;
}

OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_io_batch_wait(void *Batch,
                                                   ompx_io_op_t *Ops,
                                                   uint64_t Count) {
  if (thePlugin().inForkedChild())
    return extensionErrno(
        thePlugin().makeForkedError("an ompx_io batch"), -1);
  BatchHandleTy &H = handleOf(Batch);
  H.Results = H.Batch->wait();
  for (uint64_t I = 0; I < Count && I < H.Results.size(); ++I) {
    const IOBatchResultTy &R = H.Results[I];
    Ops[I].result = R.Errno ? -1 : ssize_t(R.Bytes);
    Ops[I].error = R.Errno;
  }
  return 0;
}

OFFLOADIO_EXTENSION_DEFINITION uint64_t __tgt_rtl_ompx_io_batch_message(void *Batch,
                                                       uint64_t Index,
                                                       char *Buf,
                                                       uint64_t Len) {
  const BatchHandleTy &H = handleOf(Batch);
  if (Index >= H.Results.size() || !H.Results[Index].Errno)
    return 0;
  const std::string &Message = H.Results[Index].Message;
  if (Buf && Len)
    std::snprintf(Buf, Len, "%s", Message.c_str());
  return Message.size();
}

OFFLOADIO_EXTENSION_DEFINITION void __tgt_rtl_ompx_io_batch_release(void *Batch) {
  // A share inherited from the parent is left alone: freeing it would wait
  // for workers that do not exist here.
  if (thePlugin().inForkedChild())
    return;
  delete &handleOf(Batch);
}

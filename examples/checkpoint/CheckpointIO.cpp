// SPDX-License-Identifier: Apache-2.0
#include "CheckpointIO.h"

#include "ompx_io.h"

#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <omp.h>
#include <string>
#include <unistd.h>

namespace offloadio {
namespace checkpoint {

using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

namespace {

Error systemError(int Errno, const llvm::Twine &Message) {
  return llvm::createStringError(std::error_code(Errno, std::generic_category()),
                                 Message + ": " + std::strerror(Errno));
}

/// One batch: submits \p Ops, waits, and turns every failed or short
/// operation into one error that names it by \p Names (same index).
Error runBatch(std::vector<ompx_io_op_t> &Ops,
               const std::vector<std::string> &Names, StringRef Path) {
  ompx_io_batch_t Batch = nullptr;
  if (ompx_io_batch_submit(Ops.data(), Ops.size(), &Batch) != 0)
    return systemError(errno, llvm::formatv("ompx_io_batch_submit({0} "
                                            "operations on {1}): {2}",
                                            Ops.size(), Path,
                                            ompx_io_last_error())
                                  .str());
  if (ompx_io_batch_wait(Batch) < 0)
    return systemError(errno, llvm::formatv("ompx_io_batch_wait({0}): {1}",
                                            Path, ompx_io_last_error())
                                  .str());
  std::string Failures;
  size_t Failed = 0;
  for (size_t I = 0; I < Ops.size(); ++I) {
    const ompx_io_op_t &Op = Ops[I];
    if (Op.result == static_cast<ssize_t>(Op.count))
      continue;
    ++Failed;
    const char *Verb = Op.opcode == OMPX_IO_OP_READ ? "read" : "write";
    std::string Why =
        Op.result < 0 ? std::strerror(Op.error)
                      : llvm::formatv("short: {0} bytes", Op.result).str();
    Failures += llvm::formatv("\n  {0} {1}: {2} bytes at offset {3}, buffer "
                              "{4} of device {5}: {6}",
                              Verb, Names[I], Op.count, Op.offset,
                              Op.device_buf, Op.device_num, Why)
                    .str();
  }
  if (Failed)
    return llvm::createStringError(
        std::make_error_code(std::errc::io_error),
        llvm::formatv("{0}: {1} of {2} operations of the batch failed:{3}",
                      Path, Failed, Ops.size(), Failures)
            .str());
  return Error::success();
}

ompx_io_op_t makeOp(int Opcode, int Fd, void *Buf, uint64_t Count,
                    uint64_t Offset, int Device) {
  ompx_io_op_t Op;
  std::memset(&Op, 0, sizeof(Op));
  Op.opcode = Opcode;
  Op.fd = Fd;
  Op.device_buf = Buf;
  Op.count = Count;
  Op.offset = static_cast<off_t>(Offset);
  Op.device_num = Device;
  return Op;
}

} // namespace

DeviceBufferTy::DeviceBufferTy(DeviceBufferTy &&Other) noexcept
    : Ptr(Other.Ptr), Bytes(Other.Bytes), Device(Other.Device) {
  Other.Ptr = nullptr;
  Other.Bytes = 0;
}

DeviceBufferTy &DeviceBufferTy::operator=(DeviceBufferTy &&Other) noexcept {
  if (this != &Other) {
    release();
    Ptr = Other.Ptr;
    Bytes = Other.Bytes;
    Device = Other.Device;
    Other.Ptr = nullptr;
    Other.Bytes = 0;
  }
  return *this;
}

DeviceBufferTy::~DeviceBufferTy() { release(); }

void DeviceBufferTy::release() {
  if (Ptr)
    omp_target_free(Ptr, Device);
  Ptr = nullptr;
  Bytes = 0;
}

Expected<DeviceBufferTy> DeviceBufferTy::allocate(uint64_t Bytes, int Device) {
  DeviceBufferTy Buffer;
  Buffer.Device = Device;
  if (Bytes == 0)
    return std::move(Buffer);
  Buffer.Ptr = omp_target_alloc(Bytes, Device);
  if (!Buffer.Ptr)
    return llvm::createStringError(
        std::make_error_code(std::errc::not_enough_memory),
        llvm::formatv("omp_target_alloc({0} bytes, device {1}) failed", Bytes,
                      Device)
            .str());
  Buffer.Bytes = Bytes;
  return std::move(Buffer);
}

Error saveCheckpoint(StringRef Path, HeaderSpecTy &Header,
                     llvm::ArrayRef<DeviceBufferTy> Buffers,
                     uint64_t Alignment) {
  if (Buffers.size() != Header.Tensors.size())
    return llvm::createStringError(
        std::make_error_code(std::errc::invalid_argument),
        llvm::formatv("{0}: {1} tensors but {2} buffers", Path,
                      Header.Tensors.size(), Buffers.size())
            .str());
  std::string Prefix = serializeHeader(Header, Alignment);
  int Fd = ::open(Path.str().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (Fd < 0)
    return systemError(errno, "open(" + Path + ", O_WRONLY | O_CREAT | O_TRUNC)");

  // The header comes from host memory (the initial device), the tensors
  // from their device buffers: one batch for the whole file.
  std::vector<ompx_io_op_t> Ops;
  std::vector<std::string> Names;
  Ops.push_back(makeOp(OMPX_IO_OP_WRITE, Fd, Prefix.data(), Prefix.size(), 0,
                       omp_get_initial_device()));
  Names.push_back("the header");
  for (size_t I = 0; I < Header.Tensors.size(); ++I) {
    const TensorSpecTy &T = Header.Tensors[I];
    if (T.bytes() != Buffers[I].size()) {
      ::close(Fd);
      return llvm::createStringError(
          std::make_error_code(std::errc::invalid_argument),
          llvm::formatv("{0}: tensor '{1}' holds {2} bytes, its buffer {3}",
                        Path, T.Name, T.bytes(), Buffers[I].size())
              .str());
    }
    if (T.bytes() == 0)
      continue;
    Ops.push_back(makeOp(OMPX_IO_OP_WRITE, Fd, Buffers[I].data(), T.bytes(),
                         Header.dataOffset() + T.Begin, Buffers[I].device()));
    Names.push_back("tensor '" + T.Name + "'");
  }
  Error Err = runBatch(Ops, Names, Path);
  if (::close(Fd) != 0 && !Err)
    return systemError(errno, llvm::formatv("close({0}, fd {1})", Path, Fd).str());
  return Err;
}

} // namespace checkpoint
} // namespace offloadio

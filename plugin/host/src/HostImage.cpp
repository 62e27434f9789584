// SPDX-License-Identifier: Apache-2.0
#include "HostImage.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELF.h"

#include <cerrno>
#include <dlfcn.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

using namespace offloadio;
using namespace offloadio::host;

bool host::isHostImage(llvm::StringRef Bytes) {
  auto File = llvm::object::ELF64LEFile::create(Bytes);
  if (!File) {
    llvm::consumeError(File.takeError());
    return false;
  }
  const auto &Header = File->getHeader();
  return Header.e_machine == llvm::ELF::EM_X86_64 &&
         Header.e_type == llvm::ELF::ET_DYN;
}

Expected<std::unique_ptr<HostImageTy>>
HostImageTy::load(const __tgt_device_image &TgtImage, int32_t ImageId,
                  int32_t DeviceId) {
  llvm::StringRef Bytes(static_cast<const char *>(TgtImage.ImageStart),
                        static_cast<const char *>(TgtImage.ImageEnd) -
                            static_cast<const char *>(TgtImage.ImageStart));
  if (!isHostImage(Bytes))
    return makeError(ErrorCode::InvalidImage,
                     "image {0} ({1} bytes at {2}) is not an x86_64 shared "
                     "object",
                     ImageId, Bytes.size(), TgtImage.ImageStart);

  std::string Name = "offload-io-image-" + std::to_string(DeviceId) + "-" +
                     std::to_string(ImageId);
  int Fd = memfd_create(Name.c_str(), MFD_CLOEXEC);
  if (Fd < 0)
    return makeErrnoError(errno, "memfd_create({0}) for device {1}", Name,
                          DeviceId);
  size_t Done = 0;
  while (Done < Bytes.size()) {
    ssize_t N = write(Fd, Bytes.data() + Done, Bytes.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      int Errno = N < 0 ? errno : EIO;
      close(Fd);
      return makeErrnoError(Errno, "write of image {0} ({1} bytes) to memfd",
                            ImageId, Bytes.size());
    }
    Done += size_t(N);
  }
  // Each memfd is a distinct file, so every device gets its own copy of the
  // image's globals, as a real device would.
  std::string Path = "/proc/self/fd/" + std::to_string(Fd);
  void *Handle = dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!Handle) {
    close(Fd);
    return makeError(ErrorCode::InvalidImage,
                     "dlopen of image {0} ({1} bytes) on device {2}: {3}",
                     ImageId, Bytes.size(), DeviceId, dlerror());
  }
  return std::unique_ptr<HostImageTy>(
      new HostImageTy(ImageId, TgtImage, Handle, Fd));
}

HostImageTy::~HostImageTy() {
  dlclose(Handle);
  close(Fd);
}

Expected<void *> HostImageTy::lookup(llvm::StringRef Name) const {
  std::string Symbol = Name.str();
  dlerror();
  void *Addr = dlsym(Handle, Symbol.c_str());
  if (!Addr)
    return makeError(ErrorCode::NotFound, "symbol '{0}' not found in image {1}",
                     Name, getId());
  return Addr;
}

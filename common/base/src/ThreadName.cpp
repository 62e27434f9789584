// SPDX-License-Identifier: Apache-2.0
#include "offloadio/ThreadName.h"
#include "offloadio/MessagePrefix.h"

#include "llvm/Support/raw_ostream.h"

#include <pthread.h>
#include <string>

using namespace offloadio;

std::string offloadio::makeThreadName(llvm::StringRef Prefix,
                                      unsigned Index) {
  std::string Name = Prefix.str() + "-" + std::to_string(Index);
  if (Name.size() > MaxThreadNameLength)
    Name.resize(MaxThreadNameLength);
  return Name;
}

Error offloadio::nameThread(pthread_t Thread, llvm::StringRef Prefix,
                            unsigned Index) {
  std::string Name = makeThreadName(Prefix, Index);
  // pthread_setname_np returns the error number; it does not set errno.
  if (int Errno = ::pthread_setname_np(Thread, Name.c_str()))
    return makeErrnoError(Errno, "pthread_setname_np(thread {0}, \"{1}\") "
                                 "failed",
                          uint64_t(Thread), Name);
  return Error::success();
}

void offloadio::nameStartedThreadOrWarn(std::thread &Thread,
                                        llvm::StringRef Prefix,
                                        unsigned Index) {
  if (auto Err = nameThread(Thread.native_handle(), Prefix, Index))
    llvm::errs() << linePrefix("")
                 << ": warning: " << takeErrorMessage(std::move(Err)) << "\n";
}

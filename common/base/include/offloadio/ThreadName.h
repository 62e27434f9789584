// SPDX-License-Identifier: Apache-2.0
//
// Names for the threads the plugins start ("oio-io-3", "oio-copy-0"), as
// ps -L, top -H, gdb and /proc/<pid>/task/<tid>/comm show them.
#ifndef OFFLOADIO_THREADNAME_H
#define OFFLOADIO_THREADNAME_H

#include "offloadio/Error.h"

#include "llvm/ADT/StringRef.h"

#include <pthread.h>
#include <string>
#include <thread>

namespace offloadio {

/// The kernel keeps 15 characters of a thread's name.
constexpr size_t MaxThreadNameLength = 15;

/// "<Prefix>-<Index>", cut to MaxThreadNameLength characters.
std::string makeThreadName(llvm::StringRef Prefix, unsigned Index);

/// Name \p Thread makeThreadName(Prefix, Index).
Error nameThread(pthread_t Thread, llvm::StringRef Prefix, unsigned Index);

/// Name the calling thread makeThreadName(Prefix, Index).
inline Error nameThisThread(llvm::StringRef Prefix, unsigned Index) {
  return nameThread(::pthread_self(), Prefix, Index);
}

/// Name \p Thread, just started, from the thread that started it: it has
/// its name before anyone can see it run. A failure is reported on stderr,
/// since the thread works as well without its name.
void nameStartedThreadOrWarn(std::thread &Thread, llvm::StringRef Prefix,
                             unsigned Index);

} // namespace offloadio

#endif // OFFLOADIO_THREADNAME_H

// SPDX-License-Identifier: Apache-2.0
//
// Names for the threads the plugins start ("oio-io-3", "oio-copy-0"), as
// ps -L, top -H, gdb and /proc/<pid>/task/<tid>/comm show them.
#ifndef OFFLOADIO_THREADNAME_H
#define OFFLOADIO_THREADNAME_H

#include "offloadio/Error.h"

#include "llvm/ADT/StringRef.h"

namespace offloadio {

/// The kernel keeps 15 characters of a thread's name.
constexpr size_t MaxThreadNameLength = 15;

/// "<Prefix>-<Index>", cut to MaxThreadNameLength characters.
std::string makeThreadName(llvm::StringRef Prefix, unsigned Index);

/// Name the calling thread makeThreadName(Prefix, Index).
Error nameThisThread(llvm::StringRef Prefix, unsigned Index);

/// nameThisThread; a failure is reported on stderr, since the thread works
/// as well without its name.
void nameThisThreadOrWarn(llvm::StringRef Prefix, unsigned Index);

} // namespace offloadio

#endif // OFFLOADIO_THREADNAME_H

// SPDX-License-Identifier: Apache-2.0
//
// Which files may be reopened through /proc/self/fd (O_DIRECT's second
// descriptor). The checks of a descriptor for a transfer are in
// TransferCheck.h.
#ifndef OFFLOADIO_IO_IODESCRIPTOR_H
#define OFFLOADIO_IO_IODESCRIPTOR_H

#include "offloadio/io/Sys.h"

#include <string>

namespace offloadio {

/// Whether the file of \p Fd may be reopened through /proc/self/fd: regular
/// files and block devices only. Opening a FIFO blocks until a peer comes,
/// a tty may become the controlling terminal, a socket cannot be opened. On
/// false, \p Why says why not.
bool canReopen(SysTy &Sys, int Fd, std::string &Why);

} // namespace offloadio

#endif // OFFLOADIO_IO_IODESCRIPTOR_H

// SPDX-License-Identifier: Apache-2.0
//
// What a device image's ELF symbol table says before the image is loaded:
// the initial bytes of a global (the compiler's per-kernel execution mode)
// and whether the code calls a function the driver supplies (printf).
// Every plugin's images are 64-bit little-endian ELF (cubins, AMDGPU code
// objects, x86_64 shared objects); anything else has no symbols here.
#ifndef OFFLOADIO_IMAGESYMBOLS_H
#define OFFLOADIO_IMAGESYMBOLS_H

#include "offloadio/Error.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace offloadio {

/// The initial bytes of global \p Name in \p Image: a view into \p Image.
/// std::nullopt when the image is not ELF or defines no such global.
/// Errors (InvalidImage): a global without bytes in the file (zero-filled
/// sections) or whose bytes lie outside the image.
Expected<std::optional<llvm::StringRef>>
readImageGlobal(llvm::StringRef Image, llvm::StringRef Name);

/// Whether \p Image's symbol table names \p Name at all, defined or not
/// (a cubin lists the driver functions it calls, such as vprintf, as
/// undefined symbols). False for anything that is not ELF.
bool imageHasSymbol(llvm::StringRef Image, llvm::StringRef Name);

/// The names of \p Image's defined symbols that start with \p Prefix, in
/// symbol-table order. Empty for anything that is not ELF.
std::vector<std::string> imageSymbolsWithPrefix(llvm::StringRef Image,
                                                llvm::StringRef Prefix);

/// The ELF machine (e_machine) of \p Image; nothing when it is not 64-bit
/// little-endian ELF.
std::optional<uint16_t> imageMachine(llvm::StringRef Image);

} // namespace offloadio

#endif // OFFLOADIO_IMAGESYMBOLS_H

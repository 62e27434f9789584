// SPDX-License-Identifier: Apache-2.0
//
// The plugin's discovery entry point, __tgt_rtl_ompx_extensions: the one
// symbol by which libompx_io recognises an offload-io plugin and reaches
// its extension calls (hidden, exported by no name of their own), through the
// versioned table of offloadio/ExtensionABI.h (whose rules say how the table
// grows).
#include "offloadio/ExtensionABI.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

using namespace offloadio;

namespace {
/// This plugin's table: every entry of OFFLOADIO_EXTENSIONS, at this
/// header's version.
ExtensionTableTy makeOwnTable() {
  ExtensionTableTy Table;
#define OFFLOADIO_EXTENSION_ENTRY(Field, Symbol) Table.Field = &Symbol;
  OFFLOADIO_EXTENSIONS(OFFLOADIO_EXTENSION_ENTRY)
#undef OFFLOADIO_EXTENSION_ENTRY
  return Table;
}
} // namespace

extern "C" OFFLOADIO_EXTENSION_API int32_t
__tgt_rtl_ompx_extensions(offloadio_extension_table *Table) {
  if (!Table || Table->Size < ExtensionTableHeaderSize)
    return EINVAL;
  static const ExtensionTableTy Own = makeOwnTable();
  // An older caller's table is shorter: it gets the entries it knows. A
  // newer caller's is longer: the entries past ours stay as it set them
  // (null), and Size tells it where ours end.
  uint32_t Filled = std::min<uint32_t>(Table->Size, Own.Size);
  std::memcpy(static_cast<void *>(Table), &Own, Filled);
  Table->Size = Filled;
  return 0;
}

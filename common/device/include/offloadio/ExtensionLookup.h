// SPDX-License-Identifier: Apache-2.0
//
// How any caller, in C or C++, reaches a plugin's extension calls: by asking
// its discovery entry point for its table (offloadio/ExtensionABI.h). The
// calls themselves are not exported; libompx_io, the tools (ompx-io) and
// the tests (conformance, fuzzers) all go through these two functions.
#ifndef OFFLOADIO_EXTENSIONLOOKUP_H
#define OFFLOADIO_EXTENSIONLOOKUP_H

#include "offloadio/ExtensionABI.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

/// The discovery entry point's type.
typedef int32_t (*offloadio_discovery_fn)(struct offloadio_extension_table *);

/// Ask \p Discover for its table into \p *Table, as a reader of this
/// header's version: 0, with every entry past what the plugin filled null
/// and Size cut to this header's table; EPROTO when the answer is shorter
/// than the table's header (Table->Size then says how long); otherwise the
/// entry point's own errno value.
static inline int
offloadio_ask_extensions(offloadio_discovery_fn Discover,
                         struct offloadio_extension_table *Table) {
  memset(Table, 0, sizeof(*Table));
  Table->Size = sizeof(*Table);
  Table->Version = OFFLOADIO_EXTENSION_TABLE_VERSION;
  int32_t Err = Discover(Table);
  if (Err)
    return Err;
  if (Table->Size < OFFLOADIO_EXTENSION_TABLE_HEADER_SIZE)
    return EPROTO;
  // Only whole entries within the plugin's size count; a size past ours (a
  // plugin that ignored ours) is cut to ours.
  if (Table->Size > sizeof(*Table))
    Table->Size = sizeof(*Table);
#define OFFLOADIO_EXTENSION_CLIP(Field, Symbol)                                \
  if (offsetof(struct offloadio_extension_table, Field) +                      \
          sizeof(Table->Field) >                                               \
      Table->Size)                                                             \
    Table->Field = NULL;
  OFFLOADIO_EXTENSIONS(OFFLOADIO_EXTENSION_CLIP)
#undef OFFLOADIO_EXTENSION_CLIP
  return 0;
}

/// The table of \p Handle (from dlopen) into \p *Table, as
/// offloadio_ask_extensions answers; ENOENT when neither it nor its
/// dependencies define the discovery entry point (no offload-io plugin).
static inline int
offloadio_extensions_of(void *Handle, struct offloadio_extension_table *Table) {
  void *Symbol = dlsym(Handle, OFFLOADIO_DISCOVERY_SYMBOL);
  if (!Symbol)
    return ENOENT;
  offloadio_discovery_fn Discover;
  // An object pointer to a function pointer, without the cast ISO C lacks.
  memcpy(&Discover, &Symbol, sizeof(Discover));
  return offloadio_ask_extensions(Discover, Table);
}

#endif // OFFLOADIO_EXTENSIONLOOKUP_H

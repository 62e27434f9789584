// SPDX-License-Identifier: Apache-2.0
//
// An offload-io plugin as an older build would be: its discovery entry point
// answers extension table version 1 with only its first two calls, and it
// serves one device, OpenMP device 42, which no other plugin has. Its
// resolve_device is the only call that libompx_io may make: its io_submit
// aborts.
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint32_t size;
  uint32_t version;
  int32_t (*resolve_device)(int32_t);
  /* Never called: a request also needs io_test and io_wait, which the
   * table lacks. */
  int32_t (*io_submit)(int32_t, int32_t, int32_t, void *, uint64_t, int64_t,
                       void **);
} old_table_t;

static int32_t ioSubmit(int32_t DeviceId, int32_t IsWrite, int32_t Fd,
                        void *DevPtr, uint64_t Count, int64_t Offset,
                        void **Request) {
  abort();
}

static int32_t resolveDevice(int32_t GlobalId) {
  return GlobalId == 42 ? 0 : -1;
}

__attribute__((visibility("default"))) int32_t
__tgt_rtl_ompx_extensions(old_table_t *Table) {
  if (!Table || Table->size < 8)
    return EINVAL;
  old_table_t Own = {sizeof(Own), 1, resolveDevice, ioSubmit};
  uint32_t Filled = Table->size < sizeof(Own) ? Table->size : sizeof(Own);
  memcpy(Table, &Own, Filled);
  Table->size = Filled;
  return 0;
}

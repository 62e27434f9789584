// The plugin check rejects a missing plugin name and a missing directory.
//
// RUN: %libomptarget-compile-generic
// RUN: env OFFLOADIO_EXPECT_PLUGIN=no-such-plugin %not %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=NAME
// RUN: env OFFLOADIO_EXPECT_PLUGIN_DIR=%t.no-such-dir %not %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=DIR
// RUN: env OFFLOADIO_EXPECT_PLUGIN_DIR=%S %not %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=WRONG
// RUN: env -u OFFLOADIO_EXPECT_PLUGIN_DIR %not %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=UNSET

#include <stdio.h>

int main(void) {
  int x = 1;
#pragma omp target map(tofrom : x)
  x = 3 * x + 1;
  printf("x = %d\n", x);
  return 0;
}

// NAME: x = 4
// NAME: offload-io plugin check: FAILED: no libomptarget.rtl.no-such-plugin* library was loaded
// DIR: x = 4
// DIR: offload-io plugin check: FAILED: expected plugin directory {{.*}}no-such-dir does not exist
// WRONG: x = 4
// WRONG: offload-io plugin check: FAILED: plugin loaded from the wrong directory
// UNSET: x = 4
// UNSET: offload-io plugin check: FAILED: OFFLOADIO_EXPECT_PLUGIN={{.*}} is set but OFFLOADIO_EXPECT_PLUGIN_DIR is not

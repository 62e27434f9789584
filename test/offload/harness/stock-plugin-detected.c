// Proves that the plugin check works: with only the stock LLVM library
// directory on LD_LIBRARY_PATH, libomptarget loads the stock plugin, the
// program itself still computes the right answer, and the check linked into
// the program reports the wrong plugin and exits with status 97.
// (Against a build whose plugin directory *is* the stock LLVM directory this
// test fails by design.)
//
// RUN: %libomptarget-compile-generic
// RUN: env LD_LIBRARY_PATH=%stock-ld-path %not %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic
// RUN: env LD_LIBRARY_PATH=%plugin-dir:%stock-ld-path %libomptarget-run-generic

#include <stdio.h>

int main(void) {
  int v[4] = {1, 2, 3, 4};
#pragma omp target map(tofrom : v)
  for (int i = 0; i < 4; ++i)
    v[i] *= 10;
  printf("v = %d %d %d %d\n", v[0], v[1], v[2], v[3]);
  return 0;
}

// CHECK: v = 10 20 30 40
// CHECK: offload-io plugin check: FAILED: plugin loaded from the wrong directory: {{.*}}/libomptarget.rtl.{{[a-z0-9_]+}}{{.*}}.so

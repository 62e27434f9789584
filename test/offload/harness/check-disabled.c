// Without OFFLOADIO_EXPECT_PLUGIN in the environment the plugin check does
// nothing: a program run by hand with the stock plugin exits normally.
//
// RUN: %libomptarget-compile-generic
// RUN: env -u OFFLOADIO_EXPECT_PLUGIN -u OFFLOADIO_EXPECT_PLUGIN_DIR \
// RUN:   LD_LIBRARY_PATH=%stock-ld-path %libomptarget-run-generic 2>&1 | %fcheck-generic
// RUN: env -u OFFLOADIO_EXPECT_PLUGIN %libomptarget-run-generic 2>&1 | %fcheck-generic

#include <stdio.h>

int main(void) {
  int s = 0;
#pragma omp target map(tofrom : s)
  for (int i = 1; i <= 10; ++i)
    s += i;
  printf("s = %d\n", s);
  return 0;
}

// CHECK: s = 55
// CHECK-NOT: FAILED

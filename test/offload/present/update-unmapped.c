// target update to(present:) of unmapped data is fatal; a plain target
// update of unmapped data is silently ignored.
//
// RUN: %libomptarget-compile-generic -fopenmp-version=51
// RUN: env OFFLOADIO_TEST_MODE=plain %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic %libomptarget-prefix-def --check-prefix=PLAIN
// RUN: env OFFLOADIO_TEST_MODE=present %libomptarget-run-fail-generic 2>&1 \
// RUN:   | %fcheck-generic %libomptarget-prefix-def --check-prefix=PRESENT

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  const char *mode = getenv("OFFLOADIO_TEST_MODE");
  int y = 7;
  if (mode && strcmp(mode, "present") == 0) {
    fprintf(stderr, "present update\n");
#pragma omp target update to(present : y)
    fprintf(stderr, "after present update\n");
  } else {
#pragma omp target update to(y)
#pragma omp target update from(y)
    fprintf(stderr, "plain updates ignored: y = %d\n", y);
  }
  return 0;
}

// PLAIN: plain updates ignored: y = 7
// PLAIN-NOT: [[LIBOMPTARGET]]

// PRESENT: present update
// PRESENT: [[LIBOMPTARGET]] message: device mapping required by 'present' motion modifier does not exist for host address 0x{{[0-9a-fA-F]+}} (4 bytes)
// PRESENT: [[LIBOMPTARGET]] fatal error 1: failure of target construct while offloading is mandatory
// PRESENT-NOT: after present update

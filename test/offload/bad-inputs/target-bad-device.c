// A target region on a device number that does not exist is a fatal
// error reported by libomptarget: 16 and 17 fail the target construct, 18
// refuses the device number itself (with the stock plugin as with ours).
//
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-fail-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,LLVM%llvm-abi

#include <omp.h>
#include <stdio.h>

int main(void) {
  int bad = omp_get_num_devices() + 10;
  int x = 0;
  fprintf(stderr, "offloading to device %d\n", bad - omp_get_num_devices());
#pragma omp target device(bad) map(tofrom : x)
  x = 1;
  fprintf(stderr, "unreachable x = %d\n", x);
  return 0;
}

// CHECK: offloading to device 10
// LLVM16: Libomptarget fatal error 1: failure of target construct while offloading is mandatory
// LLVM17: Libomptarget fatal error 1: failure of target construct while offloading is mandatory
// LLVM18: omptarget fatal error [[N:[0-9]+]]: Device number '[[N]]' out of range, only {{[0-9]+}} devices available
// CHECK-NOT: unreachable

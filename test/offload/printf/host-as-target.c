// Regions that run on the initial device, through device(initial device)
// and through if(0), between regions that run on the offload device, each
// region and the host printing in turn: every line comes out in program
// order, and each region sees its own data, as with the stock plugin.
// Host-run regions ignore map clauses and work on the host variables.
//
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic | %fcheck-generic --match-full-lines
// RUN: env OFFLOADIO_CUDA_GRAPHS=off OFFLOADIO_CUDA_COMPLETION_FLAG=off \
// RUN:   %libomptarget-run-generic | %fcheck-generic --match-full-lines
// The stock plugin, run as in order.c, prints the same.
// RUN: %if stock-runs-images %{ env ASAN_OPTIONS=detect_leaks=0 \
// RUN:   LD_LIBRARY_PATH=%stock-ld-path OFFLOADIO_EXPECT_PLUGIN_DIR=%stock-plugin-dir \
// RUN:   %libomptarget-run-generic | %fcheck-generic --match-full-lines %}

#include <omp.h>
#include <stdio.h>

int main(void) {
  int initial = omp_get_initial_device();
  int dev = omp_get_default_device();
  int n = 0;
  for (int i = 0; i < 3; ++i) {
#pragma omp target device(dev) map(tofrom : n)
    {
      n += 1;
      printf("%d: device, initial %d, n %d\n", i, omp_is_initial_device(), n);
    }
    printf("%d: host, n %d\n", i, n);
#pragma omp target device(initial) map(tofrom : n)
    {
      n += 10;
      printf("%d: device(initial), initial %d, n %d\n", i,
             omp_is_initial_device(), n);
    }
#pragma omp target if (0) map(tofrom : n)
    {
      n += 100;
      printf("%d: if(0), initial %d, n %d\n", i, omp_is_initial_device(), n);
    }
    printf("%d: host again, n %d\n", i, n);
#pragma omp target device(dev) map(tofrom : n)
    {
      n += 1000;
      printf("%d: device again, initial %d, n %d\n", i,
             omp_is_initial_device(), n);
    }
  }
  printf("end: n %d\n", n);
  return 0;
}

// CHECK-NOT: {{.}}
// CHECK: 0: device, initial 0, n 1
// CHECK-NEXT: 0: host, n 1
// CHECK-NEXT: 0: device(initial), initial 1, n 11
// CHECK-NEXT: 0: if(0), initial 1, n 111
// CHECK-NEXT: 0: host again, n 111
// CHECK-NEXT: 0: device again, initial 0, n 1111
// CHECK-NEXT: 1: device, initial 0, n 1112
// CHECK-NEXT: 1: host, n 1112
// CHECK-NEXT: 1: device(initial), initial 1, n 1122
// CHECK-NEXT: 1: if(0), initial 1, n 1222
// CHECK-NEXT: 1: host again, n 1222
// CHECK-NEXT: 1: device again, initial 0, n 2222
// CHECK-NEXT: 2: device, initial 0, n 2223
// CHECK-NEXT: 2: host, n 2223
// CHECK-NEXT: 2: device(initial), initial 1, n 2233
// CHECK-NEXT: 2: if(0), initial 1, n 2333
// CHECK-NEXT: 2: host again, n 2333
// CHECK-NEXT: 2: device again, initial 0, n 3333
// CHECK-NEXT: end: n 3333
// CHECK-NOT: {{.}}

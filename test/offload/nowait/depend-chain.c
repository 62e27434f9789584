// nowait target regions ordered by depend(out/in/inout) chains.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

#define N 1024

int main(void) {
  int a[N], b[N], c[N];
  for (int i = 0; i < N; ++i)
    a[i] = b[i] = c[i] = 0;

#pragma omp parallel
#pragma omp single
  {
#pragma omp target nowait map(from : a) depend(out : a)
    for (int i = 0; i < N; ++i)
      a[i] = i;

    // Reads a (must see the first region's result) and produces b.
#pragma omp target nowait map(to : a) map(from : b) depend(in : a) depend(out : b)
    for (int i = 0; i < N; ++i)
      b[i] = a[i] * 2;

    // inout chain on b.
    for (int k = 0; k < 5; ++k) {
#pragma omp target nowait map(tofrom : b) depend(inout : b)
      for (int i = 0; i < N; ++i)
        b[i] += 1;
    }

    // Two readers of a in parallel, then a writer of c depending on both.
#pragma omp target nowait map(to : a) map(tofrom : c) depend(in : a) depend(inout : c)
    for (int i = 0; i < N; ++i)
      c[i] += a[i];
#pragma omp target nowait map(to : b) map(tofrom : c) depend(in : b) depend(inout : c)
    for (int i = 0; i < N; ++i)
      c[i] += b[i];
#pragma omp taskwait
  }
  long sa = 0, sb = 0, sc = 0;
  for (int i = 0; i < N; ++i) {
    sa += a[i];
    sb += b[i];
    sc += c[i];
  }
  printf("sum a = %ld sum b = %ld sum c = %ld\n", sa, sb, sc);
  printf("b[100] = %d c[100] = %d\n", b[100], c[100]);
  return 0;
}

// CHECK: sum a = 523776 sum b = 1052672 sum c = 1576448
// CHECK: b[100] = 205 c[100] = 305

// nowait on target enter data, target update and target exit data, ordered
// with depend clauses and completed with taskwait.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

#define N 2048

int main(void) {
  double v[N];
  for (int i = 0; i < N; ++i)
    v[i] = i;
  double total = 0;

#pragma omp parallel
#pragma omp single
  {
#pragma omp target enter data nowait map(to : v) depend(out : v)
#pragma omp target teams distribute parallel for nowait depend(inout : v)
    for (int i = 0; i < N; ++i)
      v[i] = v[i] * 2.0;
#pragma omp target update nowait from(v[0 : 16]) depend(inout : v)
#pragma omp task depend(inout : v) shared(v)
    {
      // Host task: sees the partial update, modifies the host copy.
      for (int i = 0; i < 16; ++i)
        v[i] += 0.5;
    }
#pragma omp target update nowait to(v[0 : 16]) depend(inout : v)
#pragma omp target nowait map(from : total) depend(in : v)
    {
      double s = 0;
      for (int i = 0; i < N; ++i)
        s += v[i];
      total = s;
    }
#pragma omp target exit data nowait map(from : v) depend(inout : v)
#pragma omp taskwait
  }
  printf("total = %.1f\n", total);
  printf("v[0] = %.1f v[15] = %.1f v[16] = %.1f v[2047] = %.1f\n", v[0], v[15], v[16],
         v[N - 1]);
  return 0;
}

// CHECK: total = 4192264.0
// CHECK: v[0] = 0.5 v[15] = 30.5 v[16] = 32.0 v[2047] = 4094.0

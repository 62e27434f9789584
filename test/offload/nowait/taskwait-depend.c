// Waiting for nowait target tasks with taskwait depend and with a taskgroup.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

int main(void) {
  int x = 0, y = 0, z = 0;
#pragma omp parallel
#pragma omp single
  {
#pragma omp target nowait map(tofrom : x) depend(out : x)
    x = 11;
#pragma omp taskwait depend(in : x)
    printf("after taskwait depend: x = %d\n", x);

#pragma omp taskgroup
    {
#pragma omp target nowait map(tofrom : y)
      y = 22;
#pragma omp target nowait map(tofrom : z)
      z = 33;
    }
    printf("after taskgroup: y = %d z = %d\n", y, z);

    int w = 0;
#pragma omp target nowait map(tofrom : w) depend(out : w)
    w = x + y + z;
#pragma omp task depend(in : w) shared(w)
    printf("dependent host task sees w = %d\n", w);
#pragma omp taskwait
  }
  return 0;
}

// CHECK: after taskwait depend: x = 11
// CHECK: after taskgroup: y = 22 z = 33
// CHECK: dependent host task sees w = 66

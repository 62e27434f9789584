// target update to/from on declare target globals, including a struct
// global and an array section of a global.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

struct config {
  int iterations;
  double step;
};

#pragma omp declare target
struct config cfg = {1, 1.0};
double results[16];
int version = 1;
#pragma omp end declare target

static void run(void) {
#pragma omp target
  for (int i = 0; i < 16; ++i) {
    double v = 0;
    for (int k = 0; k < cfg.iterations; ++k)
      v += cfg.step;
    results[i] = v * i + version;
  }
}

int main(void) {
  run();
#pragma omp target update from(results)
  printf("default cfg: results[3] = %.1f\n", results[3]);

  cfg.iterations = 4;
  cfg.step = 0.5;
  version = 100;
  run(); // host changes not pushed yet
#pragma omp target update from(results[3 : 1])
  printf("before update to: results[3] = %.1f\n", results[3]);

#pragma omp target update to(cfg, version)
  run();
#pragma omp target update from(results[0 : 8])
  printf("after update to: results[3] = %.1f results[7] = %.1f results[15] = %.1f\n",
         results[3], results[7], results[15]);
#pragma omp target update from(results)
  printf("after full update: results[15] = %.1f\n", results[15]);
  return 0;
}

// CHECK: default cfg: results[3] = 4.0
// CHECK: before update to: results[3] = 4.0
// CHECK: after update to: results[3] = 106.0 results[7] = 114.0 results[15] = 16.0
// CHECK: after full update: results[15] = 130.0

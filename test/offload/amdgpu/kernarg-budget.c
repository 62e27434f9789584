// The kernel-argument arenas of the amdgpu plugin are pinned memory of the
// plugins' budget (OFFLOADIO_PINNED_MAX): after a device's first launch the
// budget holds its first arena (1 MiB, or an eighth of a small budget).
// With the smallest budget (1 MiB) the arenas are taken smaller, and
// launches, many in flight at once, and a staged copy still work, within
// the cap. Dispatches complete unexecuted (HSA_EMU_DISPATCH=noop); the
// copy is checked byte for byte.
//
// REQUIRES: amdgcn-amd-amdhsa, hsa-emulation, ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env HSA_EMU_DISPATCH=noop %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,LARGE
// RUN: env HSA_EMU_DISPATCH=noop OFFLOADIO_PINNED_MAX=1M \
// RUN:   OFFLOADIO_PAGEABLE_PATH=staged %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,SMALL

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ompx_io.h"

#define SIZE (4 << 20)
#define LAUNCHES 256

static unsigned char pattern(size_t I) { return (unsigned char)(I * 13 + 1); }

static ompx_pinned_budget_t budget(void) {
  ompx_pinned_budget_t B;
  memset(&B, 0, sizeof(B));
  if (ompx_io_get_pinned_budget(&B))
    printf("budget unknown\n");
  return B;
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  int Dev = omp_get_default_device();
  int X = 0;
#pragma omp target map(tofrom : X)
  X += 1;
  ompx_pinned_budget_t B = budget();
  // CHECK: first launch: within cap
  printf("first launch: %s\n", B.used <= B.cap ? "within cap" : "OVER CAP");
  // LARGE: arena counted: 1 MiB
  // SMALL: arena counted: an eighth
  if (B.cap >= (8u << 20))
    printf("arena counted: %s\n", B.used >= (1u << 20) ? "1 MiB" : "no");
  else
    printf("arena counted: %s\n", B.used >= B.cap / 8 ? "an eighth" : "no");

  // Many launches in flight at once, each with its own arguments.
  int *D = omp_target_alloc(LAUNCHES * sizeof(int), Dev);
  for (int I = 0; I < LAUNCHES; ++I) {
#pragma omp target is_device_ptr(D) firstprivate(I) nowait
    D[I] = I;
  }
#pragma omp taskwait
  // CHECK: launches: done
  printf("launches: done\n");

  unsigned char *Host = malloc(SIZE), *Back = malloc(SIZE);
  for (size_t I = 0; I < SIZE; ++I)
    Host[I] = pattern(I);
  void *Buf = omp_target_alloc(SIZE, Dev);
  int Rc = omp_target_memcpy(Buf, Host, SIZE, 0, 0, Dev,
                             omp_get_initial_device());
  Rc |= omp_target_memcpy(Back, Buf, SIZE, 0, 0, omp_get_initial_device(),
                          Dev);
  // CHECK: copy: 0, equal
  printf("copy: %d, %s\n", Rc, memcmp(Host, Back, SIZE) ? "DIFFERENT" : "equal");

  B = budget();
  // CHECK: end: held within cap, peak within cap
  printf("end: held %s, peak %s\n", B.used <= B.cap ? "within cap" : "OVER CAP",
         B.peak <= B.cap ? "within cap" : "OVER CAP");
  omp_target_free(Buf, Dev);
  omp_target_free(D, Dev);
  free(Host);
  free(Back);
  return 0; // The kernels never ran: X and D hold nothing of theirs.
}

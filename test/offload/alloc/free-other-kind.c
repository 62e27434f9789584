// Freeing with another kind than the allocation's (docs/errors-and-env.md,
// "Freeing with another kind"): omp_target_free of host and shared memory,
// and llvm_omp_target_free_host/_shared/_device of memory of the other
// kinds, free the memory as it was allocated, silently. Each free is then
// repeated with the right kind: that second free must be refused with one
// error line (the memory is gone), which shows the first one freed it.
//
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic 2>&1 | %fcheck-generic

#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include "offload_test.h"

extern void *llvm_omp_target_alloc_device(size_t size, int device_num);
extern void *llvm_omp_target_alloc_host(size_t size, int device_num);
extern void *llvm_omp_target_alloc_shared(size_t size, int device_num);
extern void llvm_omp_target_free_device(void *ptr, int device_num);
extern void llvm_omp_target_free_host(void *ptr, int device_num);
extern void llvm_omp_target_free_shared(void *ptr, int device_num);

typedef void *(*AllocFn)(size_t, int);
typedef void (*FreeFn)(void *, int);

static void *allocDefault(size_t Size, int Dev) {
  return omp_target_alloc(Size, Dev);
}

static const struct {
  const char *Name;
  AllocFn Alloc;
  FreeFn Free;
} Kinds[] = {{"default", allocDefault, omp_target_free},
             {"device", llvm_omp_target_alloc_device,
              llvm_omp_target_free_device},
             {"host", llvm_omp_target_alloc_host, llvm_omp_target_free_host},
             {"shared", llvm_omp_target_alloc_shared,
              llvm_omp_target_free_shared}};

int main(void) {
  int Dev = omp_get_default_device();
  // An offload region first, so that the plugin is loaded.
  int X = 1;
#pragma omp target map(tofrom : X)
  X += 1;
  OT_EXPECT(X == 2, "the device runs");

  for (int A = 0; A < 4; ++A)
    for (int F = 0; F < 4; ++F) {
      if (A == F)
        continue;
      // Small and large: the allocation cache and the backend.
      for (size_t Size = 64; Size <= (1 << 20); Size *= 16384) {
        void *P = Kinds[A].Alloc(Size, Dev);
        OT_EXPECT(P != NULL, "%s allocation of %zu bytes", Kinds[A].Name,
                  Size);
        if (!P)
          continue;
        printf("free %s as %s\n", Kinds[A].Name, Kinds[F].Name);
        fflush(stdout);
        Kinds[F].Free(P, Dev);
        printf("free again %s\n", Kinds[A].Name);
        fflush(stdout);
        Kinds[A].Free(P, Dev);
        fflush(stderr);
      }
    }
  // The runtime still works after all of this.
#pragma omp target map(tofrom : X)
  X += 1;
  OT_EXPECT(X == 3, "the device still runs");
  OT_SUMMARY();
  return ot_failures != 0;
}

// Small sizes first, then large, for each pair: no error after the free of
// another kind, exactly one after the repeated free.
// CHECK: PASS: the device runs
// CHECK: free default as device
// CHECK-NEXT: free again default
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free default as device
// CHECK-NEXT: free again default
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free default as host
// CHECK-NEXT: free again default
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free default as host
// CHECK-NEXT: free again default
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free default as shared
// CHECK-NEXT: free again default
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free default as shared
// CHECK-NEXT: free again default
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free device as default
// CHECK-NEXT: free again device
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free device as default
// CHECK-NEXT: free again device
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free device as host
// CHECK-NEXT: free again device
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free device as host
// CHECK-NEXT: free again device
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free device as shared
// CHECK-NEXT: free again device
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free device as shared
// CHECK-NEXT: free again device
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free host as default
// CHECK-NEXT: free again host
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free host as default
// CHECK-NEXT: free again host
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free host as device
// CHECK-NEXT: free again host
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free host as device
// CHECK-NEXT: free again host
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free host as shared
// CHECK-NEXT: free again host
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free host as shared
// CHECK-NEXT: free again host
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free shared as default
// CHECK-NEXT: free again shared
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free shared as default
// CHECK-NEXT: free again shared
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free shared as device
// CHECK-NEXT: free again shared
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free shared as device
// CHECK-NEXT: free again shared
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free shared as host
// CHECK-NEXT: free again shared
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK: free shared as host
// CHECK-NEXT: free again shared
// CHECK-NEXT: {{.*}} error: data_delete{{.*}}
// CHECK-NOT: error
// CHECK: PASS: the device still runs
// CHECK: failures: 0

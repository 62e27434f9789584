// OFFLOADIO_INFO=0x20 (data transfer info): the offload-io plugin prints
// "offload-io(<plugin>) ... submit ..." for host-to-device transfers and
// "... retrieve ..." for device-to-host transfers, and only for those.
// LIBOMPTARGET_INFO=32, the stock plugins' setting, prints libomptarget's
// transfer lines and none of ours: nothing falls between lines that
// LLVM's tests check in a chain of CHECK-NEXT.
//
// Not under TSan: with LIBOMPTARGET_INFO set, libomptarget 16 itself takes
// two of its own mutexes in both orders (a lock-order inversion whose every
// frame is in libomptarget.so.16, none in our plugin).
// UNSUPPORTED: thread-sanitizer
//
// RUN: %libomptarget-compile-generic
// RUN: env OFFLOADIO_INFO=0x20 %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic -DPLUGIN=%plugin-name
// RUN: env LIBOMPTARGET_INFO=32 %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=STOCK --implicit-check-not=offload-io

#include <omp.h>
#include <stdio.h>

int main(void) {
  int a[256], b[256];
  for (int i = 0; i < 256; ++i)
    a[i] = i;
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();

  fprintf(stderr, "phase to\n");
#pragma omp target enter data map(to : a)

  fprintf(stderr, "phase kernel\n");
#pragma omp target map(from : b) map(alloc : a)
  for (int i = 0; i < 256; ++i)
    b[i] = 2 * a[i];

  fprintf(stderr, "phase update from\n");
#pragma omp target update from(a)

  fprintf(stderr, "phase memcpy h2d\n");
  int *d = (int *)omp_target_alloc(sizeof(a), dev);
  omp_target_memcpy(d, b, sizeof(b), 0, 0, dev, host);

  fprintf(stderr, "phase memcpy d2h\n");
  omp_target_memcpy(a, d, sizeof(a), 0, 0, host, dev);

  fprintf(stderr, "phase delete\n");
  omp_target_free(d, dev);
#pragma omp target exit data map(delete : a)
  fprintf(stderr, "done: a[255] = %d b[255] = %d\n", a[255], b[255]);
  return 0;
}

// CHECK: phase to
// CHECK-NOT: {{^}}offload-io([[PLUGIN]]){{.*}}retrieve
// CHECK: {{^}}offload-io([[PLUGIN]]){{.*}}submit
// CHECK-NOT: {{^}}offload-io([[PLUGIN]]){{.*}}retrieve
// CHECK: phase kernel
// CHECK-NOT: {{^}}offload-io([[PLUGIN]]){{.*}}submit
// CHECK: {{^}}offload-io([[PLUGIN]]){{.*}}retrieve
// CHECK-NOT: {{^}}offload-io([[PLUGIN]]){{.*}}submit
// CHECK: phase update from
// CHECK-NOT: {{^}}offload-io([[PLUGIN]]){{.*}}submit
// CHECK: {{^}}offload-io([[PLUGIN]]){{.*}}retrieve
// CHECK-NOT: {{^}}offload-io([[PLUGIN]]){{.*}}submit
// CHECK: phase memcpy h2d
// CHECK-NOT: {{^}}offload-io([[PLUGIN]]){{.*}}retrieve
// CHECK: {{^}}offload-io([[PLUGIN]]){{.*}}submit
// CHECK-NOT: {{^}}offload-io([[PLUGIN]]){{.*}}retrieve
// CHECK: phase memcpy d2h
// CHECK-NOT: {{^}}offload-io([[PLUGIN]]){{.*}}submit
// CHECK: {{^}}offload-io([[PLUGIN]]){{.*}}retrieve
// CHECK-NOT: {{^}}offload-io([[PLUGIN]]){{.*}}submit
// CHECK: phase delete
// CHECK-NOT: {{^}}offload-io([[PLUGIN]]){{.*}}submit
// CHECK-NOT: {{^}}offload-io([[PLUGIN]]){{.*}}retrieve
// CHECK: done: a[255] = 510 b[255] = 510

// STOCK: phase to
// STOCK-NEXT: info: Copying data from host to device, HstPtr={{.*}}, Size=1024, Name={{.*}}
// STOCK-NEXT: phase kernel
// STOCK: phase update from
// STOCK-NEXT: info: Copying data from device to host, TgtPtr={{.*}}, Size=1024, Name={{.*}}
// STOCK-NEXT: phase memcpy h2d
// STOCK: done: a[255] = 510 b[255] = 510

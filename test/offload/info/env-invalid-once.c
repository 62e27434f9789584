// A bad value of a plugin-wide variable is reported once per process, not
// once per plugin: libomptarget loads all three of our plugins (x86_64,
// cuda, amdgpu) here, and each reads these variables.
//
// RUN: %libomptarget-compile-generic
// RUN: env OFFLOADIO_COPY_THREADS=abc LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS=sometimes \
// RUN:   OFFLOADIO_PROFILE=maybe LIBOMPTARGET_INFO=1x OFFLOADIO_INFO=2y \
// RUN:   %libomptarget-run-generic 2>%t.err | %fcheck-generic
// RUN: FileCheck --check-prefix=COPY %s < %t.err
// RUN: FileCheck --check-prefix=LOCK %s < %t.err
// RUN: FileCheck --check-prefix=PROFILE %s < %t.err
// RUN: FileCheck --check-prefix=INFO %s < %t.err
// RUN: FileCheck --check-prefix=OWN-INFO %s < %t.err

#include <omp.h>
#include <stdio.h>

int main(void) {
  int x = 1;
#pragma omp target map(tofrom : x)
  x += 1;
  printf("x = %d\n", x);
  return 0;
}

// CHECK: x = 2

// COPY-NOT: OFFLOADIO_COPY_THREADS
// COPY: offload-io[{{[0-9]+}}]: warning: ignoring OFFLOADIO_COPY_THREADS='abc'
// COPY-NOT: OFFLOADIO_COPY_THREADS

// LOCK-NOT: LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS
// LOCK: offload-io[{{[0-9]+}}]: warning: ignoring LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS='sometimes'
// LOCK-NOT: LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS

// PROFILE-NOT: OFFLOADIO_PROFILE
// PROFILE: offload-io[{{[0-9]+}}]: warning: ignoring OFFLOADIO_PROFILE='maybe'
// PROFILE-NOT: OFFLOADIO_PROFILE

// INFO-NOT: ignoring LIBOMPTARGET_INFO
// INFO: offload-io[{{[0-9]+}}]: warning: ignoring LIBOMPTARGET_INFO='1x'
// INFO-NOT: ignoring LIBOMPTARGET_INFO

// OWN-INFO-NOT: OFFLOADIO_INFO
// OWN-INFO: offload-io[{{[0-9]+}}]: warning: ignoring OFFLOADIO_INFO='2y'
// OWN-INFO-NOT: OFFLOADIO_INFO

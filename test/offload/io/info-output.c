// OMPX_IO_INFO=1 prints one line per transfer on stderr: the device, the
// direction, the count, descriptor, offset and buffer, the path and why it
// was chosen. Requests refused at submission print nothing; without the
// variable nothing is printed.
//
// REQUIRES: ompx-io, host-plugin
// RUN: %libomptarget-compile-generic
// RUN: env OMPX_IO_INFO=1 -u OMPX_IO_PATH %libomptarget-run-generic %t.dat \
// RUN:   2>&1 | %fcheck-generic --check-prefixes=CHECK,AUTO
// RUN: env OMPX_IO_INFO=1 OMPX_IO_PATH=direct %libomptarget-run-generic \
// RUN:   %t.dat 2>&1 | %fcheck-generic --check-prefixes=CHECK,FORCED \
// RUN:   -DPATH=direct
// RUN: env OMPX_IO_INFO=1 OMPX_IO_PATH=staged %libomptarget-run-generic \
// RUN:   %t.dat 2>&1 | %fcheck-generic --check-prefixes=CHECK,FORCED \
// RUN:   -DPATH=staged
// RUN: env -u OMPX_IO_INFO %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=QUIET

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "ompx_io.h"

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  char zeros[65536] = {0};
  if (fd < 0 || write(fd, zeros, sizeof zeros) != sizeof zeros)
    return 3;
  void *d0 = omp_target_alloc(65536, 0);
  void *d2 = omp_target_alloc(65536, 2);

  printf("phase read\n");
  printf("result %zd\n", ompx_target_pread(fd, d0, 65536, 4096, 0));
  printf("phase write\n");
  printf("result %zd\n", ompx_target_pwrite(fd, d0, 1000, 70000, 0));
  printf("phase device 2\n");
  ompx_io_request_t r;
  if (ompx_target_pread_async(fd, d2, 512, 0, 2, &r) == 0)
    printf("result %zd\n", ompx_io_wait(r));
  printf("phase refused\n");
  printf("result %zd\n", ompx_target_pread(fd, zeros, 10, 0, 0));
  printf("phase host\n");
  printf("result %zd\n",
         ompx_target_pread(fd, zeros, 10, 0, omp_get_initial_device()));
  printf("done\n");
  omp_target_free(d0, 0);
  omp_target_free(d2, 2);
  return 0;
}

// CHECK-LABEL: phase read
// AUTO-NEXT: offload-io(x86_64)[{{[0-9]+}}] device 0: read 65536 bytes, fd [[FD:[0-9]+]] offset 4096, 0x{{[0-9a-f]+}}: direct path (the host can address the device buffer)
// FORCED-NEXT: offload-io(x86_64)[{{[0-9]+}}] device 0: read 65536 bytes, fd [[FD:[0-9]+]] offset 4096, 0x{{[0-9a-f]+}}: [[PATH]] path (forced by OMPX_IO_PATH)
// CHECK-NEXT: result 61440
// CHECK-LABEL: phase write
// AUTO-NEXT: offload-io(x86_64)[{{[0-9]+}}] device 0: write 1000 bytes, fd [[FD]] offset 70000, 0x{{[0-9a-f]+}}: direct path (the host can address the device buffer)
// FORCED-NEXT: offload-io(x86_64)[{{[0-9]+}}] device 0: write 1000 bytes, fd [[FD]] offset 70000, 0x{{[0-9a-f]+}}: [[PATH]] path (forced by OMPX_IO_PATH)
// CHECK-NEXT: result 1000
// CHECK-LABEL: phase device 2
// AUTO-NEXT: offload-io(x86_64)[{{[0-9]+}}] device 2: read 512 bytes, fd [[FD]] offset 0, 0x{{[0-9a-f]+}}: direct path (the host can address the device buffer)
// FORCED-NEXT: offload-io(x86_64)[{{[0-9]+}}] device 2: read 512 bytes, fd [[FD]] offset 0, 0x{{[0-9a-f]+}}: [[PATH]] path (forced by OMPX_IO_PATH)
// CHECK-NEXT: result 512
// CHECK-LABEL: phase refused
// CHECK-NEXT: result -1
// CHECK-LABEL: phase host
// CHECK-NEXT: result 10
// CHECK-NEXT: done
// CHECK-NOT: ompx-io

// QUIET-NOT: ompx-io
// QUIET: phase read
// QUIET-NEXT: result 61440
// QUIET-NOT: ompx-io
// QUIET: done
// QUIET-NOT: ompx-io

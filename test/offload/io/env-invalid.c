// Invalid OMPX_IO_* values produce one warning naming the variable, the
// value, what is accepted and the default used instead; transfers then run
// with the default and move exact data. Sizes are decimal: hex and a leading
// zero (which other readers take as octal: 010M would be 8 MiB) are
// refused. Valid values (with K/M suffixes, any case for the path) produce
// no warning.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env OMPX_IO_THREADS=abc %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,THREADS -DVALUE=abc
// RUN: env OMPX_IO_THREADS=0 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,THREADS -DVALUE=0
// RUN: env OMPX_IO_THREADS=100000 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,THREADS -DVALUE=100000
// RUN: env OMPX_IO_THREADS=-3 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,THREADS -DVALUE=-3
// RUN: env OMPX_IO_CHUNK_SIZE=1 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,CHUNK -DVALUE=1
// RUN: env OMPX_IO_CHUNK_SIZE=lots %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,CHUNK -DVALUE=lots
// RUN: env OMPX_IO_CHUNK_SIZE=2G %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,CHUNK -DVALUE=2G
// RUN: env OMPX_IO_CHUNK_SIZE=63K %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,CHUNK -DVALUE=63K
// RUN: env OMPX_IO_CHUNK_SIZE=010M %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,CHUNK -DVALUE=010M
// RUN: env OMPX_IO_CHUNK_SIZE=0x100000 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,CHUNK -DVALUE=0x100000
// RUN: env OMPX_IO_RING_DEPTH=0 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,RING -DVALUE=0
// RUN: env OMPX_IO_PATH=sideways %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,PATH -DVALUE=sideways
// RUN: env OMPX_IO_INFO=maybe %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,INFO -DVALUE=maybe
// RUN: env OMPX_IO_THREADS=3 OMPX_IO_CHUNK_SIZE=128k OMPX_IO_RING_DEPTH=4 \
// RUN:   OMPX_IO_PATH=AUTO OMPX_IO_INFO=0 %libomptarget-run-generic %t.dat \
// RUN:   2>&1 | %fcheck-generic --check-prefixes=CHECK,VALID

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

#define SIZE ((5 << 20) + 333)

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  unsigned char *h = malloc(SIZE);
  for (size_t i = 0; i < SIZE; ++i)
    h[i] = ot_pattern(i, 1);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, SIZE, 0) != SIZE)
    return 3;
  int dev = omp_get_default_device();
  char *dbuf = omp_target_alloc(SIZE, dev);
  printf("first transfer\n");
  ssize_t n = ompx_target_pread(fd, dbuf, SIZE, 0, dev);
  printf("second transfer\n");
  ssize_t m = ompx_target_pwrite(fd, dbuf, SIZE, SIZE, dev);
  printf("read %zd wrote %zd\n", n, m);
  memset(h, 0, SIZE);
  size_t bad = pread(fd, h, SIZE, SIZE) != SIZE;
  for (size_t i = 0; i < SIZE; ++i)
    bad += h[i] != ot_pattern(i, 1);
  OT_EXPECT(bad == 0, "data exact");
  omp_target_free(dbuf, dev);
  free(h);
  OT_SUMMARY();
  return 0;
}

// CHECK-LABEL: first transfer
// THREADS-NEXT: offload-io[{{[0-9]+}}]: warning: ignoring OMPX_IO_THREADS='[[VALUE]]': expected an integer from 1 to 256; using {{([1-9]|1[0-6])$}}
// CHUNK-NEXT: offload-io[{{[0-9]+}}]: warning: ignoring OMPX_IO_CHUNK_SIZE='[[VALUE]]': expected a size from 65536 to 1073741824 (K/M/G suffixes allowed); using 2097152
// RING-NEXT: offload-io[{{[0-9]+}}]: warning: ignoring OMPX_IO_RING_DEPTH='[[VALUE]]': expected an integer from 1 to 64; using 2
// PATH-NEXT: offload-io[{{[0-9]+}}]: warning: ignoring OMPX_IO_PATH='[[VALUE]]': expected one of auto, direct, fastpath, staged; using auto
// INFO-NEXT: offload-io[{{[0-9]+}}]: warning: ignoring OMPX_IO_INFO='[[VALUE]]': expected true/false, on/off, yes/no or 1/0; using false
// CHECK-NEXT: second transfer
// CHECK-NEXT: read 5243213 wrote 5243213
// CHECK-NEXT: PASS: data exact
// CHECK-NEXT: failures: 0
// VALID-NOT: warning

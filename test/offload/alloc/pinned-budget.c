// The plugins' pinned-memory budget (OFFLOADIO_PINNED_MAX): what
// ompx_io_get_pinned_budget reports, staged copies and a staged file read
// that fit under it, a budget that leaves the file engine few ring buffers
// (it works with those), one smaller than the buffers asked for (they shrink
// to fit it: the copy and the read work, slower), and an invalid value
// (reported, default used). Data is checked byte for byte whenever a
// transfer succeeds.
//
// REQUIRES: host-plugin, ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env OFFLOADIO_PAGEABLE_PATH=staged OMPX_IO_PATH=staged \
// RUN:   %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,FITS
// RUN: env OFFLOADIO_PAGEABLE_PATH=staged OMPX_IO_PATH=staged \
// RUN:   OFFLOADIO_PINNED_MAX=6M OFFLOADIO_STAGING_BUFFER_SIZE=4M \
// RUN:   OMPX_IO_CHUNK_SIZE=1M OMPX_IO_RING_DEPTH=8 OMPX_IO_THREADS=1 \
// RUN:   %libomptarget-run-generic %t.dat 6291456 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,TIGHT
// RUN: env OFFLOADIO_PAGEABLE_PATH=staged OMPX_IO_PATH=staged \
// RUN:   OFFLOADIO_PINNED_MAX=1M OFFLOADIO_STAGING_BUFFER_SIZE=4M \
// RUN:   OMPX_IO_CHUNK_SIZE=1M \
// RUN:   %libomptarget-run-generic %t.dat 1048576 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,SMALL
// RUN: env OFFLOADIO_PINNED_MAX=lots %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=INVALID

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ompx_io.h"

#define SIZE (16 << 20)

static unsigned char pattern(size_t I) { return (unsigned char)(I * 131 + 7); }

static size_t mismatchesOf(const unsigned char *Buf, size_t N) {
  size_t Bad = 0;
  for (size_t I = 0; I < N; ++I)
    Bad += Buf[I] != pattern(I);
  return Bad;
}

static void report(const char *Phase, uint64_t Cap) {
  ompx_pinned_budget_t B;
  if (ompx_io_get_pinned_budget(&B)) {
    printf("%s: budget unknown: %s\n", Phase, strerror(errno));
    return;
  }
  printf("%s: held %s, peak %s, refused %s\n", Phase,
         B.used <= B.cap ? "within cap" : "OVER CAP",
         B.peak <= B.cap ? "within cap" : "OVER CAP",
         B.refusals ? "some" : "none");
  if (Cap && B.cap != Cap)
    printf("%s: cap %llu, expected %llu\n", Phase, (unsigned long long)B.cap,
           (unsigned long long)Cap);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  uint64_t Cap = argc > 2 ? strtoull(argv[2], NULL, 0) : 0;
  int Dev = omp_get_default_device();

  errno = 0;
  printf("null: %d %s\n", ompx_io_get_pinned_budget(NULL),
         errno == EINVAL ? "EINVAL" : strerror(errno));
  ompx_pinned_budget_t B;
  if (ompx_io_get_pinned_budget(&B) == 0)
    printf("cap: %s\n", B.cap >= (Cap ? Cap : 1ull << 30) ? "ok" : "too small");

  unsigned char *Host = malloc(SIZE), *Back = malloc(SIZE);
  for (size_t I = 0; I < SIZE; ++I)
    Host[I] = pattern(I);
  void *D = omp_target_alloc(SIZE, Dev);
  if (!Host || !Back || !D)
    return 3;

  int Rc = omp_target_memcpy(D, Host, SIZE, 0, 0, Dev,
                             omp_get_initial_device());
  printf("upload: %s\n", Rc ? "failed" : "ok");
  memset(Back, 0, SIZE);
  if (!Rc) {
    Rc = omp_target_memcpy(Back, D, SIZE, 0, 0, omp_get_initial_device(),
                           Dev);
    printf("download: %s, %zu mismatches\n", Rc ? "failed" : "ok",
           mismatchesOf(Back, SIZE));
  }
  report("copies", Cap);

  int Fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (Fd < 0 || write(Fd, Host, SIZE) != SIZE)
    return 4;
  void *DF = omp_target_alloc(SIZE, Dev);
  ssize_t N = ompx_target_pread(Fd, DF, SIZE, 0, Dev);
  if (N < 0) {
    printf("read: failed, %s\n", errno == ENOMEM ? "ENOMEM" : strerror(errno));
  } else {
    memset(Back, 0, SIZE);
    omp_target_memcpy(Back, DF, SIZE, 0, 0, omp_get_initial_device(), Dev);
    printf("read: %zd bytes, %zu mismatches\n", N, mismatchesOf(Back, SIZE));
  }
  report("file", Cap);
  close(Fd);
  omp_target_free(DF, Dev);
  omp_target_free(D, Dev);
  free(Host);
  free(Back);
  printf("done\n");
  return 0;
}

// CHECK: null: -1 EINVAL
// CHECK-NEXT: cap: ok

// FITS-NEXT: upload: ok
// FITS-NEXT: download: ok, 0 mismatches
// FITS-NEXT: copies: held within cap, peak within cap, refused none
// FITS-NEXT: read: 16777216 bytes, 0 mismatches
// FITS-NEXT: file: held within cap, peak within cap, refused none

// The staging pool's buffers shrink to an eighth of the cap; the file
// engine's ring gets the staging pool's idle buffers back, and a few 1 MiB
// buffers of the eight it may have, and reads with those.
// TIGHT-NEXT: upload: ok
// TIGHT-NEXT: download: ok, 0 mismatches
// TIGHT-NEXT: copies: held within cap, peak within cap, refused {{none|some}}
// TIGHT-NEXT: read: 16777216 bytes, 0 mismatches
// TIGHT-NEXT: file: held within cap, peak within cap, refused {{none|some}}

// 1 MiB holds no 4 MiB staging buffer: 128 KiB ones instead, and the ring's
// 1 MiB chunks move in pieces.
// SMALL-NOT: pinned-memory budget exhausted
// SMALL: upload: ok
// SMALL-NEXT: download: ok, 0 mismatches
// SMALL-NEXT: copies: held within cap, peak within cap, refused {{none|some}}
// SMALL-NEXT: read: 16777216 bytes, 0 mismatches
// SMALL-NEXT: file: held within cap, peak within cap, refused {{none|some}}

// CHECK: done

// INVALID: OFFLOADIO_PINNED_MAX
// INVALID-NOT: OFFLOADIO_PINNED_MAX
// INVALID: cap: ok
// INVALID: done

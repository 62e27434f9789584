// SPDX-License-Identifier: Apache-2.0
//
// Several processes sharing one GPU, without MPI (tools/gpu/mproc.sh starts
// them): each takes its rank from OMPI_COMM_WORLD_LOCAL_RANK and the count
// from OMPI_COMM_WORLD_LOCAL_SIZE, as mpirun would set them (so that the
// plugins budget threads and pinned memory per process), reads its shard of
// one shared file into device memory with the async file API, computes on
// the device, writes its shard of one shared checkpoint at its own offset,
// and checks it. Prints one line per process; the script adds them up.
//
//   mproc-shards prepare FILE MIB_PER_RANK RANKS   (once, before the ranks)
//   mproc-shards run DIR MIB_PER_RANK DEVICE        (in each process)
#define _GNU_SOURCE
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ompx_io.h"

static double now(void) {
  struct timespec T;
  clock_gettime(CLOCK_MONOTONIC, &T);
  return T.tv_sec + T.tv_nsec * 1e-9;
}

static uint32_t inputAt(uint64_t I) { return (uint32_t)(I * 2654435761u + 7); }

static int failed(const char *What) {
  perror(What);
  fprintf(stderr, "  %s\n", ompx_io_last_error() ? ompx_io_last_error() : "");
  return 1;
}

int main(int Argc, char **Argv) {
  if (Argc < 5)
    return 2;
  size_t Bytes = strtoull(Argv[3], NULL, 10) << 20, N = Bytes / 4;
  char In[4096], Out[4096];
  if (!strcmp(Argv[1], "prepare")) {
    int Ranks = atoi(Argv[4]);
    int Fd = open(Argv[2], O_CREAT | O_TRUNC | O_WRONLY, 0644);
    uint32_t *B = malloc(Bytes);
    if (Fd < 0 || !B)
      return failed("prepare");
    for (int R = 0; R < Ranks; ++R) {
      for (size_t I = 0; I < N; ++I)
        B[I] = inputAt((uint64_t)R * N + I);
      // One pwrite moves at most about 2 GiB: loop.
      for (size_t Done = 0; Done < Bytes;) {
        ssize_t W = pwrite(Fd, (char *)B + Done, Bytes - Done,
                           (off_t)R * Bytes + Done);
        if (W <= 0)
          return failed("pwrite");
        Done += (size_t)W;
      }
    }
    return close(Fd);
  }
  const char *RankText = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  int Rank = RankText ? atoi(RankText) : 0, Dev = atoi(Argv[4]);
  // Device omp_get_num_devices() is the host: a rank sent there would
  // pass without touching a GPU.
  if (Dev < 0 || Dev >= omp_get_num_devices()) {
    fprintf(stderr, "mproc-shards: device %d (rank %d) is not one of the %d devices\n",
            Dev, Rank, omp_get_num_devices());
    return 1;
  }
  snprintf(In, sizeof(In), "%s/mproc.in", Argv[2]);
  snprintf(Out, sizeof(Out), "%s/mproc.ckpt", Argv[2]);
  off_t Offset = (off_t)Rank * Bytes;
  uint32_t *D = omp_target_alloc(Bytes, Dev);
  int Fd = open(In, O_RDONLY), Ck = open(Out, O_RDWR);
  if (!D || Fd < 0 || Ck < 0)
    return failed("setup");
  ompx_io_request_t Req;
  double T0 = now();
  if (ompx_target_pread_async(Fd, D, Bytes, Offset, Dev, &Req) ||
      ompx_io_wait(Req) != (ssize_t)Bytes)
    return failed("read");
  double T1 = now();
  uint32_t Add = (uint32_t)Rank;
#pragma omp target teams distribute parallel for device(Dev) is_device_ptr(D)
  for (size_t I = 0; I < N; ++I)
    D[I] = D[I] * 3u + Add;
  double T2 = now();
  if (ompx_target_pwrite_async(Ck, D, Bytes, Offset, Dev, &Req) ||
      ompx_io_wait(Req) != (ssize_t)Bytes || fdatasync(Ck))
    return failed("write");
  double T3 = now();
  uint32_t *C = malloc(Bytes);
  int Bad = !C;
  // One pread moves at most about 2 GiB: loop.
  for (size_t Done = 0; !Bad && Done < Bytes;) {
    ssize_t Got = pread(Ck, (char *)C + Done, Bytes - Done, Offset + Done);
    Bad = Got <= 0;
    Done += Bad ? 0 : (size_t)Got;
  }
  for (size_t I = 0; I < N && !Bad; ++I)
    Bad = C[I] != inputAt((uint64_t)Rank * N + I) * 3u + Add;
  ompx_io_process_budget_t B;
  ompx_pinned_budget_t P;
  if (ompx_io_get_process_budget(&B) || ompx_io_get_pinned_budget(&P))
    return failed("budget");
  printf("rank %d: bytes %zu read_s %.6f write_s %.6f read %.2f GB/s write "
         "%.2f GB/s io_threads %u cpus %u pinned_cap %llu pinned_peak %llu %s\n",
         Rank, Bytes, T1 - T0, T3 - T2, Bytes / (T1 - T0) / 1e9,
         Bytes / (T3 - T2) / 1e9, B.io_threads, B.cpus,
         (unsigned long long)P.cap, (unsigned long long)P.peak,
         Bad ? "WRONG" : "correct");
  omp_target_free(D, Dev);
  return Bad;
}

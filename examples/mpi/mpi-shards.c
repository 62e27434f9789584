// SPDX-License-Identifier: Apache-2.0
//
// offload-io under MPI: every rank takes the device rank % devices, reads
// its shard of one shared input file straight into device memory with the
// async file API, computes on the device, combines a sum over all ranks
// with MPI_Allreduce from host buffers locked with llvm_omp_target_lock_mem,
// writes its shard of a checkpoint into one shared file at its own offset,
// reads it back and checks it. Rank 0 prints the aggregate rates.
//
//   mpirun -np 4 ./mpi-shards [DIR] [MIB_PER_RANK]
//
// Each rank also prints its threads and its pinned-memory cap, so that a
// script can check the budgets (tools/mpi-check.sh).
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ompx_io.h"
#include "ompx_lock.h"

static double now(void) {
  struct timespec T;
  clock_gettime(CLOCK_MONOTONIC, &T);
  return T.tv_sec + T.tv_nsec * 1e-9;
}

/// The input's value at element I: every rank can tell what it must read.
static uint32_t inputAt(uint64_t I) { return (uint32_t)(I * 2654435761u + 7); }

/// Threads of this process, and of those the ones whose name starts with
/// Prefix.
static void countThreads(const char *Prefix, int *All, int *Named) {
  *All = *Named = 0;
  DIR *D = opendir("/proc/self/task");
  if (!D)
    return;
  struct dirent *E;
  while ((E = readdir(D))) {
    if (E->d_name[0] == '.')
      continue;
    ++*All;
    char Path[96], Name[32] = "";
    snprintf(Path, sizeof(Path), "/proc/self/task/%s/comm", E->d_name);
    FILE *F = fopen(Path, "r");
    if (F) {
      if (!fgets(Name, sizeof(Name), F))
        Name[0] = 0;
      fclose(F);
    }
    *Named += strncmp(Name, Prefix, strlen(Prefix)) == 0;
  }
  closedir(D);
}

static void fail(int Rank, const char *What) {
  fprintf(stderr, "rank %d: %s failed: %s (%s)\n", Rank, What,
          strerror(errno), ompx_io_last_error() ? ompx_io_last_error() : "");
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int Argc, char **Argv) {
  MPI_Init(&Argc, &Argv);
  int Rank, Size;
  MPI_Comm_rank(MPI_COMM_WORLD, &Rank);
  MPI_Comm_size(MPI_COMM_WORLD, &Size);
  const char *Dir = Argc > 1 ? Argv[1] : ".";
  size_t Mib = Argc > 2 ? strtoul(Argv[2], NULL, 10) : 64;
  size_t Bytes = Mib << 20, N = Bytes / sizeof(uint32_t);

  int Devices = omp_get_num_devices();
  if (Devices < 1) {
    fprintf(stderr, "rank %d: no offload device\n", Rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int Dev = Rank % Devices;
  char In[4096], Out[4096];
  snprintf(In, sizeof(In), "%s/mpi-shards.in", Dir);
  snprintf(Out, sizeof(Out), "%s/mpi-shards.ckpt", Dir);

  // Rank 0 writes the input: Size shards of N elements.
  if (Rank == 0) {
    int Fd = open(In, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (Fd < 0)
      fail(Rank, "open of the input");
    uint32_t *Block = malloc(Bytes);
    for (int R = 0; R < Size; ++R) {
      for (size_t I = 0; I < N; ++I)
        Block[I] = inputAt((uint64_t)R * N + I);
      if (pwrite(Fd, Block, Bytes, (off_t)R * Bytes) != (ssize_t)Bytes)
        fail(Rank, "pwrite of the input");
    }
    free(Block);
    close(Fd);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  uint32_t *DevBuf = omp_target_alloc(Bytes, Dev);
  if (!DevBuf)
    fail(Rank, "omp_target_alloc");
  off_t Offset = (off_t)Rank * Bytes;

  // Read this rank's shard into device memory, asynchronously.
  int Fd = open(In, O_RDONLY);
  if (Fd < 0)
    fail(Rank, "open of the input");
  MPI_Barrier(MPI_COMM_WORLD);
  double T0 = now();
  ompx_io_request_t Req;
  if (ompx_target_pread_async(Fd, DevBuf, Bytes, Offset, Dev, &Req))
    fail(Rank, "ompx_target_pread_async");
  if (ompx_io_wait(Req) != (ssize_t)Bytes)
    fail(Rank, "ompx_io_wait of the read");
  double ReadSeconds = now() - T0;
  close(Fd);

  // Compute on the device: y = 3x + rank, and its sum.
  uint64_t Sum = 0;
  uint32_t Add = (uint32_t)Rank;
#pragma omp target teams distribute parallel for device(Dev)                   \
    is_device_ptr(DevBuf) reduction(+ : Sum) map(tofrom : Sum)
  for (size_t I = 0; I < N; ++I) {
    DevBuf[I] = DevBuf[I] * 3u + Add;
    Sum += DevBuf[I];
  }

  // Combine the sums from locked host buffers: the same memory a GPU-aware
  // MPI could send from with DMA (docs/mpi.md).
  uint64_t *Sums = malloc(2 * sizeof(uint64_t));
  if (!llvm_omp_target_lock_mem(Sums, 2 * sizeof(uint64_t), Dev))
    fail(Rank, "llvm_omp_target_lock_mem");
  Sums[0] = Sum;
  MPI_Allreduce(&Sums[0], &Sums[1], 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  uint64_t Expected = 0;
  for (uint64_t I = 0; I < (uint64_t)Size * N; ++I)
    Expected += (uint32_t)(inputAt(I) * 3u + (uint32_t)(I / N));
  int Bad = Sums[1] != Expected;
  if (Bad)
    fprintf(stderr, "rank %d: allreduce gave %llu, expected %llu\n", Rank,
            (unsigned long long)Sums[1], (unsigned long long)Expected);
  llvm_omp_target_unlock_mem(Sums, Dev);
  free(Sums);

  // Checkpoint: each rank writes its shard at its own offset of one file.
  if (Rank == 0) {
    int C = open(Out, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (C < 0)
      fail(Rank, "create of the checkpoint");
    close(C);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int Ck = open(Out, O_RDWR);
  if (Ck < 0)
    fail(Rank, "open of the checkpoint");
  MPI_Barrier(MPI_COMM_WORLD);
  T0 = now();
  if (ompx_target_pwrite_async(Ck, DevBuf, Bytes, Offset, Dev, &Req))
    fail(Rank, "ompx_target_pwrite_async");
  if (ompx_io_wait(Req) != (ssize_t)Bytes)
    fail(Rank, "ompx_io_wait of the write");
  if (fdatasync(Ck))
    fail(Rank, "fdatasync of the checkpoint");
  double WriteSeconds = now() - T0;

  // Verify the shard on the host, from the file.
  uint32_t *Check = malloc(Bytes);
  if (pread(Ck, Check, Bytes, Offset) != (ssize_t)Bytes)
    fail(Rank, "pread of the checkpoint");
  for (size_t I = 0; I < N && !Bad; ++I)
    if (Check[I] != inputAt((uint64_t)Rank * N + I) * 3u + Add) {
      fprintf(stderr, "rank %d: checkpoint element %zu is wrong\n", Rank, I);
      Bad = 1;
    }
  free(Check);
  close(Ck);
  omp_target_free(DevBuf, Dev);

  int Threads, IOThreads, CopyThreads, Ours;
  countThreads("oio-io-", &Threads, &IOThreads);
  countThreads("oio-copy-", &Threads, &CopyThreads);
  countThreads("oio-", &Threads, &Ours);
  ompx_io_process_budget_t B;
  ompx_pinned_budget_t P;
  if (ompx_io_get_process_budget(&B) || ompx_io_get_pinned_budget(&P))
    fail(Rank, "ompx_io_get_process_budget");
  printf("rank %d: device %d, read %.2f GB/s, write %.2f GB/s; threads %d, "
         "offload-io's %d: io %d of budget %u, copy %d of budget %u; cpus %u; "
         "pinned cap %llu peak %llu; %s\n",
         Rank, Dev, Bytes / ReadSeconds / 1e9, Bytes / WriteSeconds / 1e9,
         Threads, Ours, IOThreads, B.io_threads, CopyThreads, B.copy_threads,
         B.cpus, (unsigned long long)P.cap, (unsigned long long)P.peak,
         Bad ? "WRONG" : "correct");
  fflush(stdout);

  // Aggregate: the slowest rank's time bounds the job's.
  double Slowest[2], Times[2] = {ReadSeconds, WriteSeconds};
  MPI_Reduce(Times, Slowest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int AnyBad = 0;
  MPI_Allreduce(&Bad, &AnyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (Rank == 0)
    printf("aggregate: %d ranks x %zu MiB, read %.2f GB/s, write %.2f GB/s, "
           "%s\n",
           Size, Mib, (double)Size * Bytes / Slowest[0] / 1e9,
           (double)Size * Bytes / Slowest[1] / 1e9,
           AnyBad ? "WRONG" : "all correct");
  MPI_Finalize();
  return AnyBad;
}

// SPDX-License-Identifier: Apache-2.0
//
// Disk (not page cache) file <-> device throughput beside the disk's own
// rates, and reads into every device at once:
//   1. O_DIRECT pread of FILE into an aligned host buffer (the disk's rate),
//      with 1 and with T threads;
//   2. ompx_target_pread of the same file, opened with O_DIRECT, into device
//      memory of device D (caches dropped before each read);
//   3. pwrite + fsync of a host buffer (the disk's write rate) vs
//      ompx_target_pwrite + fsync;
//   4. with two or more devices: one locked host region copied to each
//      device, and file reads into all devices at once.
// Each round measures the host and ours back to back (a VM disk drifts);
// the ratios are medians over the rounds. The engine's first transfer is
// timed on its own.
// Usage: disk-bench FILE SIZE_MIB [DEVICE] [THREADS] [ROUNDS]. Needs root to
// drop caches; prints figures, asserts nothing but data correctness.
#define _GNU_SOURCE
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ompx_io.h"

void *llvm_omp_target_lock_mem(void *Ptr, size_t Size, int Device);
void llvm_omp_target_unlock_mem(void *Ptr, int Device);

static double now(void) {
  struct timespec T;
  clock_gettime(CLOCK_MONOTONIC, &T);
  return T.tv_sec + T.tv_nsec * 1e-9;
}

static void dropCaches(void) {
  sync();
  int Fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
  if (Fd < 0 || write(Fd, "3\n", 2) != 2)
    fprintf(stderr, "warning: could not drop caches (not root?)\n");
  if (Fd >= 0)
    close(Fd);
}

struct SliceTy {
  int Fd;
  char *Buf;
  size_t Size;
  off_t Offset;
};

static void *readSlice(void *Arg) {
  struct SliceTy *S = Arg;
  size_t Done = 0;
  while (Done < S->Size) {
    ssize_t N = pread(S->Fd, S->Buf + Done, S->Size - Done, S->Offset + Done);
    if (N <= 0)
      break;
    Done += N;
  }
  return NULL;
}

static double hostDirectRead(const char *Path, char *Buf, size_t Size,
                             int Threads) {
  dropCaches();
  int Fd = open(Path, O_RDONLY | O_DIRECT);
  pthread_t T[64];
  struct SliceTy S[64];
  size_t Slice = Size / Threads;
  double T0 = now();
  for (int I = 0; I < Threads; ++I) {
    S[I] = (struct SliceTy){Fd, Buf + I * Slice, Slice, (off_t)(I * Slice)};
    pthread_create(&T[I], NULL, readSlice, &S[I]);
  }
  for (int I = 0; I < Threads; ++I)
    pthread_join(T[I], NULL);
  double T1 = now();
  close(Fd);
  return Size / (T1 - T0) / 1e9;
}

static double hostDirectWrite(const char *Path, const char *Buf, size_t Size) {
  int Fd = open(Path, O_CREAT | O_TRUNC | O_WRONLY | O_DIRECT, 0644);
  double T0 = now();
  for (size_t Done = 0; Done < Size;) {
    ssize_t N = pwrite(Fd, Buf + Done, Size - Done, Done);
    if (N <= 0) {
      perror("disk-bench: pwrite");
      exit(1);
    }
    Done += N;
  }
  fsync(Fd);
  double Rate = Size / (now() - T0) / 1e9;
  close(Fd);
  return Rate;
}

static int cmpDouble(const void *A, const void *B) {
  double X = *(const double *)A, Y = *(const double *)B;
  return X < Y ? -1 : X > Y;
}

static double median(double *V, int N) {
  qsort(V, N, sizeof(double), cmpDouble);
  return N % 2 ? V[N / 2] : (V[N / 2 - 1] + V[N / 2]) / 2;
}

int main(int Argc, char **Argv) {
  if (Argc < 3) {
    fprintf(stderr, "usage: %s FILE SIZE_MIB [DEVICE] [THREADS] [ROUNDS]\n",
            Argv[0]);
    return 2;
  }
  const char *Path = Argv[1];
  size_t Size = (size_t)atol(Argv[2]) << 20;
  int Dev = Argc > 3 ? atoi(Argv[3]) : 0;
  int Threads = Argc > 4 ? atoi(Argv[4]) : 8;
  int Rounds = Argc > 5 ? atoi(Argv[5]) : 3;
  if (Rounds < 1 || Rounds > 16 || Threads < 1 || Threads > 64) {
    fprintf(stderr, "disk-bench: 1-16 rounds and 1-64 threads\n");
    return 2;
  }
  char *Host = aligned_alloc(1 << 21, Size);
  for (size_t I = 0; I < Size; I += 8)
    *(uint64_t *)(Host + I) = I * 0x9E3779B97F4A7C15ull;
  char *Out = malloc(strlen(Path) + 8);
  sprintf(Out, "%s.out", Path);
  char *D = omp_target_alloc(Size, Dev);
  char *Back = aligned_alloc(1 << 21, Size);
  if (!D || !Back) {
    fprintf(stderr, "disk-bench: cannot allocate %zu bytes\n", Size);
    return 1;
  }
  printf("file %s, %zu MiB, device %d, %d threads, %d rounds\n", Path,
         Size >> 20, Dev, Threads, Rounds);

  // The engine's first transfer starts its threads, allocates its pinned
  // rings and probes the vendor fastpath (cuFile's driver open); reported
  // on its own, not as part of the throughput rounds.
  hostDirectWrite(Path, Host, 64 << 20);
  int Fd = open(Path, O_RDONLY | O_DIRECT);
  double T0 = now();
  ssize_t Warm = ompx_target_pread(Fd, D, 64 << 20, 0, Dev);
  double StartMs = (now() - T0) * 1e3;
  close(Fd);
  Fd = open(Out, O_CREAT | O_TRUNC | O_WRONLY | O_DIRECT, 0644);
  T0 = now();
  Warm += ompx_target_pwrite(Fd, D, 64 << 20, 0, Dev);
  double FirstWriteMs = (now() - T0) * 1e3;
  close(Fd);
  printf("first calls: 64 MiB ompx_target_pread %.1f ms, pwrite %.1f ms "
         "(engine start and fastpath probe)%s\n",
         StartMs, FirstWriteMs, Warm == (128 << 20) ? "" : ", SHORT");

  double R1[16], RT[16], RDev[16], RRatio[16], WHost[16], WDev[16], WRatio[16];
  int Ok = 1, Complete = 1;
  for (int Round = 0; Round < Rounds; ++Round) {
    WHost[Round] = hostDirectWrite(Path, Host, Size);
    R1[Round] = hostDirectRead(Path, Back, Size, 1);
    RT[Round] = hostDirectRead(Path, Back, Size, Threads);
    dropCaches();
    Fd = open(Path, O_RDONLY | O_DIRECT);
    T0 = now();
    ssize_t Got = ompx_target_pread(Fd, D, Size, 0, Dev);
    RDev[Round] = Size / (now() - T0) / 1e9;
    close(Fd);
    double Best = R1[Round] > RT[Round] ? R1[Round] : RT[Round];
    RRatio[Round] = RDev[Round] / Best;
    memset(Back, 0, Size);
    omp_target_memcpy(Back, D, Size, 0, 0, omp_get_initial_device(), Dev);
    Ok &= Got == (ssize_t)Size;
    for (size_t I = 0; Ok && I < Size; I += 8)
      Ok = *(uint64_t *)(Back + I) == I * 0x9E3779B97F4A7C15ull;

    // Same descriptor flags as the host baseline: O_DIRECT.
    Fd = open(Out, O_CREAT | O_TRUNC | O_WRONLY | O_DIRECT, 0644);
    T0 = now();
    ssize_t Put = ompx_target_pwrite(Fd, D, Size, 0, Dev);
    fsync(Fd);
    WDev[Round] = Size / (now() - T0) / 1e9;
    close(Fd);
    WRatio[Round] = WDev[Round] / WHost[Round];
    Complete &= Put == (ssize_t)Size;
    printf("round %d: read host 1t %.2f, %dt %.2f, ours %.2f GB/s (%.2fx); "
           "write host %.2f, ours %.2f GB/s (%.2fx)\n",
           Round + 1, R1[Round], Threads, RT[Round], RDev[Round], RRatio[Round],
           WHost[Round], WDev[Round], WRatio[Round]);
  }
  ompx_io_stats_t St;
  ompx_io_get_stats(Dev, &St);
  printf("read  O_DIRECT pread, 1 thread            %6.2f GB/s (median)\n",
         median(R1, Rounds));
  printf("read  O_DIRECT pread, %2d threads          %6.2f GB/s (median)\n",
         Threads, median(RT, Rounds));
  printf("read  ompx_target_pread (O_DIRECT fd)     %6.2f GB/s  %.2fx the "
         "better host rate (median of rounds), data %s, fallbacks %llu\n",
         median(RDev, Rounds), median(RRatio, Rounds), Ok ? "exact" : "WRONG",
         (unsigned long long)St.fallbacks);
  if (St.fallbacks)
    printf("      last fallback: %s\n", St.last_fallback);
  printf("write pwrite + fsync (O_DIRECT), host      %6.2f GB/s (median)\n",
         median(WHost, Rounds));
  printf("write ompx_target_pwrite + fsync (O_DIRECT) %6.2f GB/s  %.2fx "
         "(median of rounds), %s\n",
         median(WDev, Rounds), median(WRatio, Rounds),
         Complete ? "complete" : "SHORT");
  unlink(Out);

  int NumDevices = omp_get_num_devices();
  if (NumDevices - Dev >= 2) {
    int Second = Dev + 1;
    char *D2 = omp_target_alloc(Size, Second);
    char *Locked = llvm_omp_target_lock_mem(Host, Size, Dev);
    uint64_t B0[OMPX_COPY_NUM_PATHS], B1[OMPX_COPY_NUM_PATHS],
        C[OMPX_COPY_NUM_PATHS];
    omp_target_memcpy(D, Host, Size, 0, 0, Dev, omp_get_initial_device());
    omp_target_memcpy(D2, Host, Size, 0, 0, Second, omp_get_initial_device());
    ompx_target_copy_counters(Dev, B0, C);
    ompx_target_copy_counters(Second, B1, C);
    printf("two devices: region locked once via device %d (%s); pinned bytes "
           "to device %d: %llu, to device %d: %llu\n",
           Dev, Locked ? "ok" : "FAILED", Dev,
           (unsigned long long)B0[OMPX_COPY_PINNED_TO_DEVICE], Second,
           (unsigned long long)B1[OMPX_COPY_PINNED_TO_DEVICE]);
    llvm_omp_target_unlock_mem(Host, Dev);
    dropCaches();
    Fd = open(Path, O_RDONLY);
    ompx_io_request_t R0, R1;
    T0 = now();
    ompx_target_pread_async(Fd, D, Size, 0, Dev, &R0);
    ompx_target_pread_async(Fd, D2, Size, 0, Second, &R1);
    ssize_t G0 = ompx_io_wait(R0), G1 = ompx_io_wait(R1);
    double Both = 2.0 * Size / (now() - T0) / 1e9;
    close(Fd);
    printf("two devices: file read into both at once: %.2f GB/s total, %s\n",
           Both, G0 == (ssize_t)Size && G1 == (ssize_t)Size ? "complete"
                                                             : "SHORT");
    omp_target_free(D2, Second);
  }
  omp_target_free(D, Dev);
  unlink(Path);
  return Ok ? 0 : 1;
}

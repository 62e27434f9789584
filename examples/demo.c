// SPDX-License-Identifier: Apache-2.0
//
// offload-io demo: an ordinary OpenMP offload program. Run it through
// tools/demo.sh, which points LD_LIBRARY_PATH at our plugins; the
// "offload-io(...)" lines on stderr come from our plugin, not libomptarget.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "ompx_io.h" /* and ompx_lock.h: llvm_omp_target_lock_mem */

int __tgt_print_device_info(int64_t Device);

static double now(void) {
  struct timespec T;
  clock_gettime(CLOCK_MONOTONIC, &T);
  return T.tv_sec + T.tv_nsec * 1e-9;
}

int main(void) {
  int NumDevices = omp_get_num_devices();
  printf("== %d OpenMP devices\n", NumDevices);
  if (NumDevices == 0) {
    printf("no offload device found\n");
    return 1;
  }
  fflush(stdout);
  __tgt_print_device_info(0);

  // A kernel on every device: each computes its own saxpy.
  enum { N = 1 << 20 };
  float *X = malloc(N * sizeof(float)), *Y = malloc(N * sizeof(float));
  int Failures = 0;
  for (int D = 0; D < NumDevices; ++D) {
    for (int I = 0; I < N; ++I) {
      X[I] = (float)I;
      Y[I] = 1.0f;
    }
    float A = (float)(D + 2);
#pragma omp target teams distribute parallel for device(D)                      \
    map(to : X[0 : N]) map(tofrom : Y[0 : N])
    for (int I = 0; I < N; ++I)
      Y[I] = A * X[I] + Y[I];
    int Bad = 0;
    for (int I = 0; I < N; ++I)
      Bad += Y[I] != A * (float)I + 1.0f;
    printf("== device %d: saxpy over %d floats: %s\n", D, N,
           Bad ? "WRONG" : "correct");
    Failures += Bad != 0;
  }

  // Transfers: plain and locked host memory.
  size_t Bytes = 256u << 20;
  char *Host = malloc(Bytes);
  memset(Host, 7, Bytes);
  void *Dev = omp_target_alloc(Bytes, 0);
  int Host0 = omp_get_initial_device();
  // First touch of fresh device memory costs page faults; keep it out of
  // the figures.
  omp_target_memcpy(Dev, Host, Bytes, 0, 0, 0, Host0);
  for (int Locked = 0; Locked < 2; ++Locked) {
    if (Locked && !llvm_omp_target_lock_mem(Host, Bytes, 0)) {
      printf("lock failed\n");
      return 1;
    }
    double T0 = now();
    omp_target_memcpy(Dev, Host, Bytes, 0, 0, 0, Host0);
    double T1 = now();
    omp_target_memcpy(Host, Dev, Bytes, 0, 0, Host0, 0);
    double T2 = now();
    printf("== %s host memory, 256 MiB: host->device %.1f GB/s, "
           "device->host %.1f GB/s\n",
           Locked ? "locked" : "pageable", Bytes / (T1 - T0) / 1e9,
           Bytes / (T2 - T1) / 1e9);
  }
  // A sub-buffer of a locked region shares it: same device address + offset.
  char *Base = llvm_omp_target_lock_mem(Host, Bytes, 0);
  char *Sub = llvm_omp_target_lock_mem(Host + 4096, 1024, 0);
  printf("== sub-buffer lock inside the region: %s\n",
         Sub == Base + 4096 ? "device pointer = region + offset" : "WRONG");
  Failures += Sub != Base + 4096;
  // Partial overlap is refused.
  void *Overlap = llvm_omp_target_lock_mem(Host + Bytes - 16, 64, 0);
  printf("== overlapping lock: %s\n", Overlap ? "WRONGLY accepted" : "refused");
  Failures += Overlap != NULL;
  llvm_omp_target_unlock_mem(Host + 4096, 0);
  llvm_omp_target_unlock_mem(Host, 0);
  llvm_omp_target_unlock_mem(Host, 0);
  omp_target_free(Dev, 0);
  free(Host);
  free(X);
  free(Y);
  // File -> device: stream a file into device memory, then reduce it there.
  {
    const char *Path = "/tmp/offload-io-demo.dat";
    size_t FileBytes = 256u << 20, Count = FileBytes / sizeof(uint32_t);
    uint32_t *Data = malloc(FileBytes);
    uint64_t Expected = 0;
    for (size_t I = 0; I < Count; ++I)
      Expected += Data[I] = (uint32_t)(I * 2654435761u) >> 8;
    int Fd = open(Path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    if (Fd < 0 || write(Fd, Data, FileBytes) != (ssize_t)FileBytes) {
      perror("demo file");
      return 1;
    }
    uint32_t *DevData = omp_target_alloc(FileBytes, 0);
    // The first read into fresh device memory also pays for its first
    // touch (on the host plugin, the kernel zeroing 65,536 new pages); the
    // second read is the transfer alone, which is what a loop of reads into
    // the same buffers sees.
    double T0 = now();
    ssize_t First = ompx_target_pread(Fd, DevData, FileBytes, 0, 0);
    double T1 = now();
    ssize_t Got = ompx_target_pread(Fd, DevData, FileBytes, 0, 0);
    double T2 = now();
    printf("== file -> device, first read into fresh device memory: %.1f GB/s "
           "(includes the first touch of its pages)\n",
           First / (T1 - T0) / 1e9);
    Failures += First != (ssize_t)FileBytes;
    uint64_t Sum = 0;
#pragma omp target teams distribute parallel for reduction(+ : Sum)            \
    is_device_ptr(DevData) device(0)
    for (size_t I = 0; I < Count; ++I)
      Sum += DevData[I];
    ompx_io_stats_t Stats;
    ompx_io_get_stats(0, &Stats);
    const char *Used = "none";
    for (int P = 0; P < OMPX_IO_NUM_PATHS; ++P)
      if (Stats.bytes_read[P])
        Used = ompx_io_path_name(P);
    printf("== file -> device: %zd bytes by the %s path at %.1f GB/s "
           "(page-cached file, device memory touched before); sum on the "
           "device %s\n",
           Got, Used, Got / (T2 - T1) / 1e9,
           Sum == Expected ? "correct" : "WRONG");
    Failures += Got != (ssize_t)FileBytes || Sum != Expected;
    close(Fd);
    unlink(Path);
    omp_target_free(DevData, 0);
    free(Data);
  }

  printf("== demo %s\n", Failures ? "FAILED" : "passed");
  return Failures != 0;
}

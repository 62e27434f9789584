// SPDX-License-Identifier: Apache-2.0
//
// ompx-io bench's child: one measured configuration in a fresh process
// (the engine reads OMPX_IO_* once per device), reporting through a pipe.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ompx-io.h"
#include "ompx_io.h"

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum { MODE_OMPX, MODE_HOST1, MODE_HOST2, MODE_NAIVE } ModeTy;

typedef struct {
  pthread_barrier_t Start, Done;
  int Fd, Write, Stop;
  char *Buf;
  size_t Count;
  off_t Off;
  ssize_t Result;
  int Errno;
} HelperTy;

static void *helperMain(void *Arg) {
  HelperTy *H = Arg;
  for (;;) {
    pthread_barrier_wait(&H->Start);
    if (H->Stop)
      return NULL;
    H->Result = fullIO(H->Write, H->Fd, H->Buf, H->Count, H->Off);
    H->Errno = errno;
    pthread_barrier_wait(&H->Done);
  }
}

static int ResultFd = -1;

static void childFail(const char *Fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
static void childFail(const char *Fmt, ...) {
  char Msg[512];
  va_list Ap;
  va_start(Ap, Fmt);
  vsnprintf(Msg, sizeof(Msg), Fmt, Ap);
  va_end(Ap);
  for (char *C = Msg; *C; ++C)
    if (*C == '\n')
      *C = ' ';
  dprintf(ResultFd, "err %s\n", Msg);
  exit(1);
}

/// argv: __child read|write ompx|host1|host2|naive DEVICE FILE SIZE SAMPLES
///       aligned|malloc cached|direct
int cmdChild(int Argc, char **Argv) {
  ResultFd = RESULT_FD;
  if (fcntl(ResultFd, F_GETFD) < 0)
    return 2;
  if (Argc != 8)
    childFail("internal: bad child arguments");
  int Write = !strcmp(Argv[0], "write");
  ModeTy Mode = !strcmp(Argv[1], "ompx")    ? MODE_OMPX
                : !strcmp(Argv[1], "host1") ? MODE_HOST1
                : !strcmp(Argv[1], "host2") ? MODE_HOST2
                                            : MODE_NAIVE;
  int Dev = atoi(Argv[2]);
  const char *File = Argv[3];
  size_t Size = (size_t)strtoull(Argv[4], NULL, 10);
  int Samples = atoi(Argv[5]);
  int MallocBuffer = !strcmp(Argv[6], "malloc");
  int Direct = !strcmp(Argv[7], "direct");
  int Initial = omp_get_initial_device();

  int Fd = open(File, (Write ? O_WRONLY : O_RDONLY) | (Direct ? O_DIRECT : 0));
  if (Fd < 0)
    childFail("open %s%s: %s", File, Direct ? " with O_DIRECT" : "",
              strerror(errno));
  // Small transfers are repeated within a sample so that each sample moves
  // at least 64 MiB and timer and process noise stay small.
  size_t Inner = Size >= (64u << 20) ? 1 : (64u << 20) / Size;
  if (Inner > 4096)
    Inner = 4096;

  char *Host = NULL, *DevBuf = NULL;
  if (Mode != MODE_OMPX) {
    // Page-aligned by default: the kernel copies page-cache data into a
    // buffer at malloc's usual 16-byte page offset about half as fast as
    // into a cache-line-aligned one (device allocations are aligned).
    Host = MallocBuffer ? malloc(Size)
                        : aligned_alloc(4096, (Size + 4095) & ~(size_t)4095);
    if (!Host)
      childFail("malloc of %zu bytes failed", Size);
    memset(Host, 0x5a, Size);
  }
  if (Mode == MODE_OMPX || Mode == MODE_NAIVE) {
    DevBuf = omp_target_alloc(Size, Dev);
    if (!DevBuf)
      childFail("omp_target_alloc of %zu bytes on device %d failed", Size, Dev);
  }
  ompx_io_stats_t Before, After;
  if (Mode == MODE_OMPX && ompx_io_get_stats(Dev, &Before))
    childFail("ompx_io_get_stats(%d): %s", Dev, strerror(errno));

  HelperTy H;
  pthread_t Helper;
  if (Mode == MODE_HOST2) {
    pthread_barrier_init(&H.Start, NULL, 2);
    pthread_barrier_init(&H.Done, NULL, 2);
    H.Fd = Fd;
    H.Write = Write;
    H.Stop = 0;
    H.Buf = Host + Size / 2;
    H.Count = Size - Size / 2;
    H.Off = (off_t)(Size / 2);
    if (pthread_create(&Helper, NULL, helperMain, &H))
      childFail("pthread_create failed");
  }

  char Err[256] = "";
  double *Rates = calloc((size_t)Samples, sizeof(double));
  for (int S = -1; S < Samples; ++S) {
    // Sample -1 is the warm-up: first touch of fresh device memory and of
    // the staging buffers costs page faults that are not transfer cost.
    size_t Reps = S < 0 ? 1 : Inner;
    double T0 = now();
    for (size_t Rep = 0; Rep < Reps; ++Rep) {
      ssize_t R = (ssize_t)Size;
      switch (Mode) {
      case MODE_OMPX:
        R = Write ? ompx_target_pwrite(Fd, DevBuf, Size, 0, Dev)
                  : ompx_target_pread(Fd, DevBuf, Size, 0, Dev);
        if (R != (ssize_t)Size)
          snprintf(Err, sizeof(Err), "ompx_target_p%s of %zu bytes: %s",
                   Write ? "write" : "read", Size,
                   R < 0 ? strerror(errno) : "short transfer");
        break;
      case MODE_HOST1:
        R = fullIO(Write, Fd, Host, Size, 0);
        if (R != (ssize_t)Size)
          snprintf(Err, sizeof(Err), "p%s: %s", Write ? "write" : "read",
                   strerror(errno));
        break;
      case MODE_HOST2: {
        pthread_barrier_wait(&H.Start);
        R = fullIO(Write, Fd, Host, Size / 2, 0);
        int E = errno;
        pthread_barrier_wait(&H.Done);
        if (R != (ssize_t)(Size / 2) || H.Result != (ssize_t)H.Count)
          snprintf(Err, sizeof(Err), "p%s (2 threads): %s",
                   Write ? "write" : "read",
                   strerror(R != (ssize_t)(Size / 2) ? E : H.Errno));
        break;
      }
      case MODE_NAIVE:
        if (Write) {
          if (omp_target_memcpy(Host, DevBuf, Size, 0, 0, Initial, Dev))
            snprintf(Err, sizeof(Err), "omp_target_memcpy D2H failed");
          else if (fullIO(1, Fd, Host, Size, 0) != (ssize_t)Size)
            snprintf(Err, sizeof(Err), "pwrite: %s", strerror(errno));
        } else {
          if (fullIO(0, Fd, Host, Size, 0) != (ssize_t)Size)
            snprintf(Err, sizeof(Err), "pread: %s", strerror(errno));
          else if (omp_target_memcpy(DevBuf, Host, Size, 0, 0, Dev, Initial))
            snprintf(Err, sizeof(Err), "omp_target_memcpy H2D failed");
        }
        break;
      }
      if (*Err)
        childFail("%s", Err);
    }
    double T = now() - T0;
    if (S >= 0)
      Rates[S] = (double)Size * (double)Reps / (T > 0 ? T : 1e-9) / 1e9;
  }

  // Check the data: the first and last bytes of the device buffer must
  // match the file.
  if (DevBuf) {
    size_t N = Size < VERIFY_BYTES ? Size : VERIFY_BYTES;
    char *A = malloc(N), *B = malloc(N);
    int VFd = open(File, O_RDONLY);
    for (int End = 0; End < 2 && VFd >= 0; ++End) {
      size_t Off = End ? Size - N : 0;
      if (omp_target_memcpy(A, DevBuf, N, 0, Off, Initial, Dev))
        childFail("verification copy failed");
      if (fullIO(0, VFd, B, N, (off_t)Off) != (ssize_t)N)
        childFail("verification read: %s", strerror(errno));
      if (memcmp(A, B, N))
        childFail("data check failed: device bytes at offset %zu differ "
                  "from the file",
                  Off);
    }
    if (VFd >= 0)
      close(VFd);
    free(A);
    free(B);
  }

  const char *Effective = "-";
  unsigned long long Fallbacks = 0;
  if (Mode == MODE_OMPX) {
    if (ompx_io_get_stats(Dev, &After))
      childFail("ompx_io_get_stats(%d): %s", Dev, strerror(errno));
    uint64_t Best = 0;
    for (int P = 0; P < OMPX_IO_NUM_PATHS; ++P) {
      uint64_t D = Write ? After.bytes_written[P] - Before.bytes_written[P]
                         : After.bytes_read[P] - Before.bytes_read[P];
      if (D > Best) {
        Best = D;
        Effective = ompx_io_path_name(P);
      }
    }
    Fallbacks = After.fallbacks - Before.fallbacks;
  }
  if (Mode == MODE_HOST2) {
    H.Stop = 1;
    pthread_barrier_wait(&H.Start);
    pthread_join(Helper, NULL);
  }
  qsort(Rates, (size_t)Samples, sizeof(double), cmpDouble);
  double Median = Samples % 2
                      ? Rates[Samples / 2]
                      : (Rates[Samples / 2 - 1] + Rates[Samples / 2]) / 2;
  dprintf(ResultFd, "ok %.6f %.6f %.6f %s %llu\n", Rates[Samples - 1], Median,
          Rates[0], Effective, Fallbacks);
  if (DevBuf)
    omp_target_free(DevBuf, Dev);
  free(Host);
  free(Rates);
  close(Fd);
  return 0;
}

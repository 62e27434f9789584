// SPDX-License-Identifier: Apache-2.0
//
// ompx-io: inspect and benchmark the offload-io file <-> device engine.
//
//   ompx-io info                 devices, transfer paths, engine settings
//   ompx-io bench [options]      file -> device (and device -> file) GB/s
//
// An OpenMP offload program itself (built with -fopenmp-targets=...), so it
// sees the same devices as any application. The engine reads OMPX_IO_* once
// per device, at its first transfer, so every benchmark configuration runs in
// a fresh child process (this program, exec'ed with "__child") that reports
// its figures through a pipe.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ompx_io.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_FILE "/tmp/ompx-io-bench.dat"
#define RESULT_FD 3
#define MAX_LIST 32
#define VERIFY_BYTES 4096
#define MAX_ROUNDS 16

//===----------------------------------------------------------------------===//
// Utilities
//===----------------------------------------------------------------------===//

static const char *Prog = "ompx-io";

static void usageError(const char *Fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
static void usageError(const char *Fmt, ...) {
  va_list Ap;
  va_start(Ap, Fmt);
  fprintf(stderr, "%s: error: ", Prog);
  vfprintf(stderr, Fmt, Ap);
  va_end(Ap);
  fprintf(stderr, "\nRun '%s --help' for usage.\n", Prog);
  exit(2);
}

static void fatal(const char *Fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
static void fatal(const char *Fmt, ...) {
  va_list Ap;
  va_start(Ap, Fmt);
  fprintf(stderr, "%s: error: ", Prog);
  vfprintf(stderr, Fmt, Ap);
  va_end(Ap);
  fputc('\n', stderr);
  exit(1);
}

static double now(void) {
  struct timespec T;
  clock_gettime(CLOCK_MONOTONIC, &T);
  return (double)T.tv_sec + (double)T.tv_nsec * 1e-9;
}

/// Parses "4096", "64K", "1M", "1MiB", "2G", "1GB" (binary units).
static int parseSize(const char *S, uint64_t *Out) {
  char *End;
  errno = 0;
  if (!isdigit((unsigned char)*S))
    return -1;
  unsigned long long N = strtoull(S, &End, 10);
  if (errno)
    return -1;
  uint64_t Scale = 1;
  switch (toupper((unsigned char)*End)) {
  case 'K':
    Scale = 1ull << 10;
    ++End;
    break;
  case 'M':
    Scale = 1ull << 20;
    ++End;
    break;
  case 'G':
    Scale = 1ull << 30;
    ++End;
    break;
  case 'T':
    Scale = 1ull << 40;
    ++End;
    break;
  default:
    break;
  }
  if (Scale != 1 && (!strcasecmp(End, "iB") || !strcasecmp(End, "B")))
    End += strlen(End);
  else if (Scale == 1 && !strcasecmp(End, "B"))
    ++End;
  if (*End || N > UINT64_MAX / Scale)
    return -1;
  *Out = N * Scale;
  return 0;
}

static int parseUnsigned(const char *S, unsigned long Max, unsigned long *Out) {
  char *End;
  errno = 0;
  if (!isdigit((unsigned char)*S))
    return -1;
  unsigned long N = strtoul(S, &End, 10);
  if (errno || *End || N > Max)
    return -1;
  *Out = N;
  return 0;
}

static void formatSize(uint64_t N, char *Buf, size_t Len) {
  static const char *const Units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  unsigned U = 0;
  while (U < 4 && N >= 1024 && N % 1024 == 0) {
    N /= 1024;
    ++U;
  }
  snprintf(Buf, Len, "%llu %s", (unsigned long long)N, Units[U]);
}

/// Splits a comma-separated list into at most MAX_LIST newly allocated items.
static int splitList(const char *Opt, const char *S, char **Items) {
  char *Copy = strdup(S), *Save = NULL;
  int N = 0;
  for (char *Tok = strtok_r(Copy, ",", &Save); Tok;
       Tok = strtok_r(NULL, ",", &Save)) {
    while (isspace((unsigned char)*Tok))
      ++Tok;
    if (!*Tok)
      continue;
    if (N == MAX_LIST)
      usageError("%s: at most %d values", Opt, MAX_LIST);
    Items[N++] = strdup(Tok);
  }
  free(Copy);
  if (N == 0)
    usageError("%s: empty list", Opt);
  return N;
}

/// Full-count pread/pwrite, as the engine does it; returns bytes or -1.
static ssize_t fullIO(int Write, int Fd, char *Buf, size_t Count, off_t Off) {
  size_t Done = 0;
  while (Done < Count) {
    size_t Want = Count - Done;
    if (Want > (1u << 30))
      Want = 1u << 30;
    ssize_t N = Write ? pwrite(Fd, Buf + Done, Want, Off + (off_t)Done)
                      : pread(Fd, Buf + Done, Want, Off + (off_t)Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return -1;
    if (N == 0) {
      if (Write)
        errno = EIO;
      else
        errno = ENODATA;
      return -1;
    }
    Done += (size_t)N;
  }
  return (ssize_t)Done;
}

//===----------------------------------------------------------------------===//
// Plugins and devices
//===----------------------------------------------------------------------===//

typedef struct {
  char Path[PATH_MAX];
  int OffloadIO; ///< Has the offload-io extensions.
  int32_t (*Resolve)(int32_t);
} PluginInfo;

typedef struct {
  PluginInfo Plugins[8];
  int Num;
} PluginList;

static int visitObject(struct dl_phdr_info *Info, size_t Size, void *Data) {
  (void)Size;
  PluginList *L = Data;
  const char *Name = Info->dlpi_name;
  if (!Name || !*Name)
    return 0;
  const char *Base = strrchr(Name, '/');
  Base = Base ? Base + 1 : Name;
  if (strncmp(Base, "libomptarget.rtl.", 17) || L->Num == 8)
    return 0;
  PluginInfo *P = &L->Plugins[L->Num++];
  if (!realpath(Name, P->Path))
    snprintf(P->Path, sizeof(P->Path), "%s", Name);
  P->OffloadIO = 0;
  P->Resolve = NULL;
  void *H = dlopen(Name, RTLD_LAZY | RTLD_NOLOAD);
  if (H) {
    P->Resolve = (int32_t(*)(int32_t))dlsym(H, "__tgt_rtl_ompx_resolve_device");
    P->OffloadIO = P->Resolve && dlsym(H, "__tgt_rtl_ompx_io_submit");
    dlclose(H);
  }
  return 0;
}

/// The offload plugins libomptarget has loaded (call after device init).
static void loadedPlugins(PluginList *L) {
  L->Num = 0;
  dl_iterate_phdr(visitObject, L);
}

/// Short name of a plugin file: "x86_64", "cuda", "amdgpu".
static void pluginShortName(const char *Path, char *Buf, size_t Len) {
  const char *Base = strrchr(Path, '/');
  Base = Base ? Base + 1 : Path;
  Base += 17;
  size_t N = strcspn(Base, ".");
  snprintf(Buf, Len, "%.*s", (int)N, Base);
}

/// Describes device \p Dev's plugin into \p Buf; returns 1 if it is served
/// by an offload-io plugin.
static int describeDevice(int Dev, const PluginList *L, char *Buf, size_t Len) {
  for (int I = 0; I < L->Num; ++I) {
    if (!L->Plugins[I].OffloadIO)
      continue;
    int32_t Local = L->Plugins[I].Resolve(Dev);
    if (Local >= 0) {
      char Short[64];
      pluginShortName(L->Plugins[I].Path, Short, sizeof(Short));
      snprintf(Buf, Len, "offload-io %s plugin, its device %d", Short,
               (int)Local);
      return 1;
    }
  }
  snprintf(Buf, Len, "not an offload-io plugin's device");
  return 0;
}

//===----------------------------------------------------------------------===//
// Engine settings (mirrors IOConfigTy::fromEnv)
//===----------------------------------------------------------------------===//

static int parseEngineSize(const char *S, uint64_t *Out) {
  while (isspace((unsigned char)*S))
    ++S;
  char Buf[64];
  snprintf(Buf, sizeof(Buf), "%s", S);
  size_t L = strlen(Buf);
  while (L && isspace((unsigned char)Buf[L - 1]))
    Buf[--L] = 0;
  uint64_t Scale = 1;
  if (L) {
    switch (tolower((unsigned char)Buf[L - 1])) {
    case 'k':
      Scale = 1ull << 10;
      break;
    case 'm':
      Scale = 1ull << 20;
      break;
    case 'g':
      Scale = 1ull << 30;
      break;
    default:
      break;
    }
    if (Scale != 1)
      Buf[--L] = 0;
  }
  if (!L || !isdigit((unsigned char)Buf[0]))
    return -1;
  char *End;
  errno = 0;
  unsigned long long N = strtoull(Buf, &End, 0);
  if (errno || *End || N > UINT64_MAX / Scale)
    return -1;
  *Out = N * Scale;
  return 0;
}

static void printEngineSettings(void) {
  long Cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (Cores < 1)
    Cores = 1;
  long DefThreads = Cores < 8 ? Cores : 8;
  struct {
    const char *Name;
    char Default[64];
    int Kind; // 0 int, 1 size, 2 path, 3 bool
    uint64_t Min, Max;
  } Vars[] = {
      {"OMPX_IO_THREADS", "", 0, 1, 256},
      {"OMPX_IO_CHUNK_SIZE", "8M", 1, 64 << 10, 1 << 30},
      {"OMPX_IO_RING_DEPTH", "2", 0, 1, 64},
      {"OMPX_IO_PATH", "auto", 2, 0, 0},
      {"OMPX_IO_INFO", "off", 3, 0, 0},
  };
  snprintf(Vars[0].Default, sizeof(Vars[0].Default), "%ld", DefThreads);
  printf("Engine settings (read by each device's engine at its first "
         "transfer):\n");
  for (unsigned I = 0; I < sizeof(Vars) / sizeof(Vars[0]); ++I) {
    const char *V = getenv(Vars[I].Name);
    if (!V) {
      printf("  %-19s %-8s (default)\n", Vars[I].Name, Vars[I].Default);
      continue;
    }
    int Ok = 0;
    uint64_t N;
    switch (Vars[I].Kind) {
    case 0:
    case 1:
      Ok = !parseEngineSize(V, &N) && N >= Vars[I].Min && N <= Vars[I].Max &&
           (Vars[I].Kind == 1 || !strpbrk(V, "kKmMgG"));
      break;
    case 2: {
      static const char *const P[] = {"auto", "direct", "fastpath", "staged"};
      char T[32];
      snprintf(T, sizeof(T), "%s", V);
      for (unsigned J = 0; J < 4; ++J)
        Ok |= !strcasecmp(T, P[J]);
      break;
    }
    case 3: {
      static const char *const B[] = {"1",  "0",   "true", "false",
                                      "on", "off", "yes",  "no"};
      for (unsigned J = 0; J < 8; ++J)
        Ok |= !strcasecmp(V, B[J]);
      break;
    }
    }
    if (Ok)
      printf("  %-19s %-8s (from the environment; default %s)\n", Vars[I].Name,
             V, Vars[I].Default);
    else
      printf("  %-19s %-8s (INVALID: the engine warns and uses %s)\n",
             Vars[I].Name, V, Vars[I].Default);
  }
}

//===----------------------------------------------------------------------===//
// ompx-io info
//===----------------------------------------------------------------------===//

static int cmdInfo(int Argc, char **Argv) {
  if (Argc > 0)
    usageError("info: unexpected argument '%s'", Argv[0]);
  int N = omp_get_num_devices();
  int Initial = omp_get_initial_device();
  printf("OpenMP: %d offload device%s; initial (host) device is %d\n", N,
         N == 1 ? "" : "s", Initial);
  PluginList L;
  loadedPlugins(&L);
  printf("Offload plugins loaded:\n");
  if (!L.Num)
    printf("  (none)\n");
  for (int I = 0; I < L.Num; ++I)
    printf("  %s (%s)\n", L.Plugins[I].Path,
           L.Plugins[I].OffloadIO ? "offload-io" : "stock, no ompx_io support");
  int Ours = 0;
  for (int D = 0; D < N; ++D) {
    char Desc[160];
    int IsOurs = describeDevice(D, &L, Desc, sizeof(Desc));
    Ours += IsOurs;
    printf("\nDevice %d: %s\n", D, Desc);
    // A tiny kernel shows that the device really runs code. libomptarget
    // ends the program if it cannot, so flush what we have printed first.
    fflush(stdout);
    int V = 0;
#pragma omp target device(D) map(from : V)
    V = 42;
    printf("  kernel launch: %s\n", V == 42 ? "ok" : "FAILED");
    unsigned Mask = 0;
    char Why[1024] = "";
    if (ompx_io_paths(D, &Mask, Why, sizeof(Why))) {
      printf("  transfer paths: unknown (%s)\n", strerror(errno));
      continue;
    }
    printf("  available paths:");
    for (int P = 0; P < OMPX_IO_NUM_PATHS; ++P)
      if (Mask & (1u << P))
        printf(" %s", ompx_io_path_name(P));
    printf("\n");
    if (*Why) {
      printf("  unavailable:\n");
      char *Save = NULL;
      for (char *Line = strtok_r(Why, "\n", &Save); Line;
           Line = strtok_r(NULL, "\n", &Save))
        printf("    %s\n", Line);
    }
    const char *Fallback =
        (Mask & (1u << OMPX_IO_PATH_DIRECT)) ? "direct" : "staged";
    if (Mask & (1u << OMPX_IO_PATH_FASTPATH))
      printf("  auto picks: fastpath where it accepts the file and buffer, "
             "else %s\n",
             Fallback);
    else
      printf("  auto picks: %s%s\n", Fallback,
             strcmp(Fallback, "staged")
                 ? ""
                 : " (direct for host or shared allocations)");
  }
  printf("\n");
  printEngineSettings();
  if (N && !Ours)
    printf("\nNote: no device is served by an offload-io plugin, so ompx_io "
           "calls fail with ENODEV.\nPut the offload-io library directory "
           "first in LD_LIBRARY_PATH.\n");
  return 0;
}

//===----------------------------------------------------------------------===//
// Child: one measured configuration
//===----------------------------------------------------------------------===//

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

static int cmpDouble(const void *A, const void *B) {
  double X = *(const double *)A, Y = *(const double *)B;
  return X < Y ? -1 : X > Y;
}

/// argv: __child read|write ompx|host1|host2|naive DEVICE FILE SIZE SAMPLES
///       aligned|malloc
static int cmdChild(int Argc, char **Argv) {
  ResultFd = RESULT_FD;
  if (fcntl(ResultFd, F_GETFD) < 0)
    return 2;
  if (Argc != 7)
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
  int Initial = omp_get_initial_device();

  int Fd = open(File, Write ? O_WRONLY : O_RDONLY);
  if (Fd < 0)
    childFail("open %s: %s", File, strerror(errno));
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

//===----------------------------------------------------------------------===//
// ompx-io bench
//===----------------------------------------------------------------------===//

typedef struct {
  int Write;
  const char *Label;   ///< Row name: path or baseline.
  const char *Mode;    ///< Child mode.
  const char *EnvPath; ///< OMPX_IO_PATH value, or NULL.
  uint64_t Size;
  unsigned Threads;
  // Results.
  int Ok;
  double Best, Median, Worst;
  char Effective[16];
  unsigned long long Fallbacks;
  char Error[512];
  // Over the rounds.
  int Runs, Failed;
  double RoundMedians[MAX_ROUNDS];
} JobTy;

typedef struct {
  int Device;
  const char *File;
  uint64_t Sizes[MAX_LIST];
  int NumSizes;
  unsigned Threads[MAX_LIST];
  int NumThreads;
  char *Paths[MAX_LIST];
  int NumPaths;
  int Write;
  int Repeat;
  int Rounds;
  const char *Csv;
  int KeepFile;
  int Naive;          ///< -1 auto, 0 off, 1 on.
  int MallocBaseline; ///< Baseline host buffers from plain malloc.
} BenchOpts;

static void benchUsage(FILE *Out) {
  fprintf(
      Out,
      "Usage: ompx-io bench [options]\n"
      "  Measures file -> device memory throughput of ompx_target_pread (and "
      "with\n"
      "  --write device -> file of ompx_target_pwrite) for each path x size x\n"
      "  thread count, next to baselines measured in the same run: plain pread "
      "into\n"
      "  a page-aligned host buffer with 1 and 2 threads (pread-1t, pread-2t;\n"
      "  pwrite-* for --write; see --baseline-buffer) and, for devices whose\n"
      "  memory the host cannot address, pread + omp_target_memcpy (naive).\n"
      "  Every configuration runs in its own child process, since the engine\n"
      "  reads OMPX_IO_THREADS once per device.\n"
      "  The file is read from the page cache: figures are not storage "
      "speeds.\n"
      "\n"
      "Options:\n"
      "  --device N         OpenMP device (default 0)\n"
      "  --file PATH        test file (default " DEFAULT_FILE
      "); created with the\n"
      "                     largest size if missing, reused if large enough\n"
      "  --sizes LIST       transfer sizes (default 1M,16M,256M,1G; K/M/G "
      "suffixes)\n"
      "  --threads LIST     OMPX_IO_THREADS values (default 1,2,4,8)\n"
      "  --paths LIST       auto,direct,staged,fastpath (default "
      "direct,staged,\n"
      "                     fastpath); paths the device lacks are skipped\n"
      "  --write            also measure device -> file (into "
      "PATH.write.<pid>,\n"
      "                     page-cached, no fsync, removed afterwards)\n"
      "  --repeat K         timed samples per configuration (default 3); each\n"
      "                     sample moves at least 64 MiB; the best is "
      "reported\n"
      "  --rounds R         run the whole matrix R times, interleaved, and "
      "keep\n"
      "                     each configuration's best (default 1): load that\n"
      "                     comes and goes then hits all configurations alike\n"
      "  --csv FILE         also write the results as CSV\n"
      "  --naive / --no-naive  force the pread + omp_target_memcpy baseline "
      "on/off\n"
      "  --baseline-buffer aligned|malloc\n"
      "                     host buffer of the baselines (default aligned: "
      "page-\n"
      "                     aligned; malloc's 16-byte page offset makes the\n"
      "                     kernel's page-cache copy about 2x slower on x86)\n"
      "  --keep-file        keep a test file that this run created\n"
      "  -h, --help         this help\n");
}

static int cmpU64(const void *A, const void *B) {
  uint64_t X = *(const uint64_t *)A, Y = *(const uint64_t *)B;
  return X < Y ? -1 : X > Y;
}

static void parseBench(int Argc, char **Argv, BenchOpts *O) {
  memset(O, 0, sizeof(*O));
  O->File = DEFAULT_FILE;
  O->Repeat = 3;
  O->Rounds = 1;
  O->Naive = -1;
  const char *Sizes = "1M,16M,256M,1G", *Threads = "1,2,4,8",
             *Paths = "direct,staged,fastpath";
  for (int I = 0; I < Argc; ++I) {
    const char *A = Argv[I];
    const char *Val = NULL;
    char Name[64];
    // --opt=value or --opt value.
    const char *Eq = strchr(A, '=');
    if (!strncmp(A, "--", 2) && Eq) {
      snprintf(Name, sizeof(Name), "%.*s", (int)(Eq - A), A);
      Val = Eq + 1;
    } else {
      snprintf(Name, sizeof(Name), "%s", A);
    }
    int TakesValue = !strcmp(Name, "--device") || !strcmp(Name, "--file") ||
                     !strcmp(Name, "--sizes") || !strcmp(Name, "--threads") ||
                     !strcmp(Name, "--paths") || !strcmp(Name, "--repeat") ||
                     !strcmp(Name, "--rounds") || !strcmp(Name, "--csv") ||
                     !strcmp(Name, "--baseline-buffer");
    if (TakesValue && !Val) {
      if (I + 1 >= Argc)
        usageError("bench: %s needs a value", Name);
      Val = Argv[++I];
    } else if (!TakesValue && Val) {
      usageError("bench: %s takes no value", Name);
    }
    unsigned long N;
    if (!strcmp(Name, "-h") || !strcmp(Name, "--help")) {
      benchUsage(stdout);
      exit(0);
    } else if (!strcmp(Name, "--device")) {
      if (parseUnsigned(Val, INT_MAX, &N))
        usageError("bench: --device: '%s' is not a device number", Val);
      O->Device = (int)N;
    } else if (!strcmp(Name, "--file")) {
      if (!*Val)
        usageError("bench: --file: empty path");
      O->File = Val;
    } else if (!strcmp(Name, "--sizes")) {
      Sizes = Val;
    } else if (!strcmp(Name, "--threads")) {
      Threads = Val;
    } else if (!strcmp(Name, "--paths")) {
      Paths = Val;
    } else if (!strcmp(Name, "--repeat")) {
      if (parseUnsigned(Val, 1000, &N) || N == 0)
        usageError("bench: --repeat: '%s' is not a count from 1 to 1000", Val);
      O->Repeat = (int)N;
    } else if (!strcmp(Name, "--rounds")) {
      if (parseUnsigned(Val, MAX_ROUNDS, &N) || N == 0)
        usageError("bench: --rounds: '%s' is not a count from 1 to %d", Val,
                   MAX_ROUNDS);
      O->Rounds = (int)N;
    } else if (!strcmp(Name, "--csv")) {
      if (!*Val)
        usageError("bench: --csv: empty path");
      O->Csv = Val;
    } else if (!strcmp(Name, "--baseline-buffer")) {
      if (!strcmp(Val, "malloc"))
        O->MallocBaseline = 1;
      else if (strcmp(Val, "aligned"))
        usageError("bench: --baseline-buffer: '%s' is not aligned or malloc",
                   Val);
    } else if (!strcmp(Name, "--write")) {
      O->Write = 1;
    } else if (!strcmp(Name, "--naive")) {
      O->Naive = 1;
    } else if (!strcmp(Name, "--no-naive")) {
      O->Naive = 0;
    } else if (!strcmp(Name, "--keep-file")) {
      O->KeepFile = 1;
    } else {
      usageError("bench: unknown option '%s'", A);
    }
  }
  char *Items[MAX_LIST];
  O->NumSizes = splitList("--sizes", Sizes, Items);
  for (int I = 0; I < O->NumSizes; ++I) {
    if (parseSize(Items[I], &O->Sizes[I]) || O->Sizes[I] == 0)
      usageError("bench: --sizes: '%s' is not a size such as 4096, 64K, 16M "
                 "or 1G",
                 Items[I]);
    if (O->Sizes[I] > (uint64_t)SSIZE_MAX / 2)
      usageError("bench: --sizes: '%s' is too large", Items[I]);
    free(Items[I]);
  }
  // Ascending and without duplicates: the table and plots read by size.
  qsort(O->Sizes, (size_t)O->NumSizes, sizeof(uint64_t), cmpU64);
  int Unique = 0;
  for (int I = 0; I < O->NumSizes; ++I)
    if (!Unique || O->Sizes[I] != O->Sizes[Unique - 1])
      O->Sizes[Unique++] = O->Sizes[I];
  O->NumSizes = Unique;
  unsigned long N;
  O->NumThreads = splitList("--threads", Threads, Items);
  for (int I = 0; I < O->NumThreads; ++I) {
    if (parseUnsigned(Items[I], 256, &N) || N == 0)
      usageError("bench: --threads: '%s' is not a thread count from 1 to 256 "
                 "(the engine's OMPX_IO_THREADS range)",
                 Items[I]);
    O->Threads[I] = (unsigned)N;
    free(Items[I]);
  }
  O->NumPaths = splitList("--paths", Paths, O->Paths);
  for (int I = 0; I < O->NumPaths; ++I) {
    for (char *C = O->Paths[I]; *C; ++C)
      *C = (char)tolower((unsigned char)*C);
    if (strcmp(O->Paths[I], "auto") && strcmp(O->Paths[I], "direct") &&
        strcmp(O->Paths[I], "staged") && strcmp(O->Paths[I], "fastpath"))
      usageError("bench: --paths: '%s' is not one of auto, direct, staged, "
                 "fastpath",
                 O->Paths[I]);
    for (int J = 0; J < I; ++J)
      if (!strcmp(O->Paths[I], O->Paths[J]))
        usageError("bench: --paths: '%s' given twice", O->Paths[I]);
  }
}

/// Creates (or checks) the test file; returns 1 if this run created it.
static int prepareFile(const char *File, uint64_t Size) {
  struct stat St;
  int Created = 0;
  if (stat(File, &St) == 0) {
    if (!S_ISREG(St.st_mode))
      fatal("--file %s is not a regular file", File);
    if ((uint64_t)St.st_size >= Size)
      return 0;
    if (strcmp(File, DEFAULT_FILE))
      fatal("--file %s has %lld bytes, less than the largest size (%llu); "
            "remove it or choose another file",
            File, (long long)St.st_size, (unsigned long long)Size);
  } else if (errno != ENOENT) {
    fatal("--file %s: %s", File, strerror(errno));
  }
  fprintf(stderr, "%s: creating %s (%llu bytes)\n", Prog, File,
          (unsigned long long)Size);
  int Fd = open(File, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (Fd < 0)
    fatal("cannot create %s: %s", File, strerror(errno));
  Created = 1;
  size_t Chunk = 8u << 20;
  uint64_t *Buf = malloc(Chunk);
  uint64_t X = 0x9e3779b97f4a7c15ull;
  for (uint64_t Off = 0; Off < Size; Off += Chunk) {
    for (size_t I = 0; I < Chunk / 8; ++I) {
      X ^= X << 13;
      X ^= X >> 7;
      X ^= X << 17;
      Buf[I] = X;
    }
    size_t N = Size - Off < Chunk ? (size_t)(Size - Off) : Chunk;
    if (fullIO(1, Fd, (char *)Buf, N, (off_t)Off) != (ssize_t)N) {
      int E = errno;
      close(Fd);
      unlink(File);
      fatal("writing %s: %s", File, strerror(E));
    }
  }
  free(Buf);
  // Clean pages stay cached; dirty ones would be written back during the
  // measurements.
  if (fdatasync(Fd))
    fatal("fdatasync %s: %s", File, strerror(errno));
  close(Fd);
  return Created;
}

/// Reads the file once to pull it into the page cache; returns the cached
/// fraction of the first \p Size bytes (mincore), or -1.
static double warmFile(const char *File, uint64_t Size, double *Rate) {
  int Fd = open(File, O_RDONLY);
  if (Fd < 0)
    fatal("open %s: %s", File, strerror(errno));
  size_t Chunk = 8u << 20;
  char *Buf = malloc(Chunk);
  double T0 = now();
  for (uint64_t Off = 0; Off < Size; Off += Chunk) {
    size_t N = Size - Off < Chunk ? (size_t)(Size - Off) : Chunk;
    if (fullIO(0, Fd, Buf, N, (off_t)Off) != (ssize_t)N)
      fatal("reading %s: %s", File, strerror(errno));
  }
  *Rate = (double)Size / (now() - T0) / 1e9;
  free(Buf);
  double Frac = -1;
  void *Map = mmap(NULL, Size, PROT_READ, MAP_SHARED, Fd, 0);
  if (Map != MAP_FAILED) {
    long Page = sysconf(_SC_PAGESIZE);
    size_t Pages = (Size + (uint64_t)Page - 1) / (uint64_t)Page;
    unsigned char *Vec = malloc(Pages);
    if (Vec && !mincore(Map, Size, Vec)) {
      size_t In = 0;
      for (size_t I = 0; I < Pages; ++I)
        In += Vec[I] & 1;
      Frac = (double)In / (double)Pages;
    }
    free(Vec);
    munmap(Map, Size);
  }
  close(Fd);
  return Frac;
}

/// Environment for a child: ours minus OMPX_IO_THREADS/OMPX_IO_PATH, plus
/// the job's values.
static char **childEnv(const JobTy *J) {
  size_t N = 0;
  while (environ[N])
    ++N;
  char **Env = calloc(N + 3, sizeof(char *));
  size_t K = 0;
  for (size_t I = 0; I < N; ++I)
    if (strncmp(environ[I], "OMPX_IO_THREADS=", 16) &&
        strncmp(environ[I], "OMPX_IO_PATH=", 13))
      Env[K++] = environ[I];
  static char Threads[64], Path[64];
  snprintf(Threads, sizeof(Threads), "OMPX_IO_THREADS=%u", J->Threads);
  Env[K++] = Threads;
  if (J->EnvPath) {
    snprintf(Path, sizeof(Path), "OMPX_IO_PATH=%s", J->EnvPath);
    Env[K++] = Path;
  }
  Env[K] = NULL;
  return Env;
}

static volatile sig_atomic_t Interrupted;
static void onSignal(int Sig) {
  (void)Sig;
  Interrupted = 1;
}

static void runJob(JobTy *J, const char *Exe, const BenchOpts *O,
                   const char *File) {
  int Pipe[2];
  if (pipe2(Pipe, O_CLOEXEC))
    fatal("pipe: %s", strerror(errno));
  // Keep both ends away from fds 0-3 so the dup2 below always clears
  // close-on-exec on the child's copy.
  for (int I = 0; I < 2; ++I) {
    int Fd = fcntl(Pipe[I], F_DUPFD_CLOEXEC, 10);
    close(Pipe[I]);
    Pipe[I] = Fd;
  }
  char ErrName[] = "/tmp/ompx-io-child.XXXXXX";
  int ErrFd = mkostemp(ErrName, O_CLOEXEC);
  if (ErrFd < 0)
    fatal("mkostemp: %s", strerror(errno));
  unlink(ErrName);

  char Dev[16], Size[32], Samples[16];
  snprintf(Dev, sizeof(Dev), "%d", O->Device);
  snprintf(Size, sizeof(Size), "%llu", (unsigned long long)J->Size);
  snprintf(Samples, sizeof(Samples), "%d", O->Repeat);
  char *Args[] = {(char *)Exe,
                  "__child",
                  J->Write ? "write" : "read",
                  (char *)J->Mode,
                  Dev,
                  (char *)File,
                  Size,
                  Samples,
                  O->MallocBaseline ? "malloc" : "aligned",
                  NULL};
  posix_spawn_file_actions_t Fa;
  posix_spawn_file_actions_init(&Fa);
  posix_spawn_file_actions_adddup2(&Fa, Pipe[1], RESULT_FD);
  posix_spawn_file_actions_adddup2(&Fa, ErrFd, 1);
  posix_spawn_file_actions_adddup2(&Fa, ErrFd, 2);
  char **Env = childEnv(J);
  pid_t Pid;
  int Rc = posix_spawn(&Pid, Exe, &Fa, NULL, Args, Env);
  posix_spawn_file_actions_destroy(&Fa);
  free(Env);
  close(Pipe[1]);
  if (Rc)
    fatal("cannot start %s: %s", Exe, strerror(Rc));

  char Out[1024];
  size_t Len = 0;
  for (;;) {
    ssize_t N = read(Pipe[0], Out + Len, sizeof(Out) - 1 - Len);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      break;
    Len += (size_t)N;
    if (Len == sizeof(Out) - 1)
      break;
  }
  Out[Len] = 0;
  close(Pipe[0]);
  int Status = 0;
  while (waitpid(Pid, &Status, 0) < 0 && errno == EINTR)
    ;
  J->Ok = 0;
  if (!strncmp(Out, "ok ", 3) &&
      sscanf(Out + 3, "%lf %lf %lf %15s %llu", &J->Best, &J->Median, &J->Worst,
             J->Effective, &J->Fallbacks) == 5 &&
      WIFEXITED(Status) && WEXITSTATUS(Status) == 0) {
    J->Ok = 1;
  } else if (!strncmp(Out, "err ", 4)) {
    Out[strcspn(Out, "\n")] = 0;
    snprintf(J->Error, sizeof(J->Error), "%s", Out + 4);
  } else if (WIFSIGNALED(Status)) {
    snprintf(J->Error, sizeof(J->Error), "child killed by signal %d (%s)",
             WTERMSIG(Status), strsignal(WTERMSIG(Status)));
  } else {
    snprintf(J->Error, sizeof(J->Error),
             "child exited with status %d and no "
             "result",
             WIFEXITED(Status) ? WEXITSTATUS(Status) : -1);
  }
  if (!J->Ok) {
    // Append the tail of what the child printed.
    char Tail[256];
    off_t End = lseek(ErrFd, 0, SEEK_END);
    off_t Start =
        End > (off_t)sizeof(Tail) - 1 ? End - (off_t)sizeof(Tail) + 1 : 0;
    ssize_t N = pread(ErrFd, Tail, sizeof(Tail) - 1, Start);
    if (N > 0) {
      Tail[N] = 0;
      for (char *C = Tail; *C; ++C)
        if (*C == '\n')
          *C = ' ';
      size_t L = strlen(J->Error);
      snprintf(J->Error + L, sizeof(J->Error) - L, "; child output: ...%s",
               Tail);
    }
  }
  close(ErrFd);
}

static void progress(int Tty, int Done, int Total, const JobTy *J,
                     const JobTy *Finished) {
  char Sz[32];
  if (Tty) {
    enum { W = 30 };
    int Fill = Total ? Done * W / Total : W;
    char Bar[W + 1];
    memset(Bar, '#', (size_t)Fill);
    memset(Bar + Fill, '.', (size_t)(W - Fill));
    Bar[W] = 0;
    char Label[96] = "done";
    if (J) {
      formatSize(J->Size, Sz, sizeof(Sz));
      snprintf(Label, sizeof(Label), "%s %s %s, %u thread%s",
               J->Write ? "write" : "read", J->Label, Sz, J->Threads,
               J->Threads == 1 ? "" : "s");
    }
    fprintf(stderr, "\r\033[K[%s] %d/%d %s", Bar, Done, Total, Label);
    if (!J)
      fprintf(stderr, "\r\033[K");
    fflush(stderr);
    return;
  }
  if (!Finished)
    return;
  formatSize(Finished->Size, Sz, sizeof(Sz));
  if (Finished->Ok)
    fprintf(stderr, "%s: [%d/%d] %s %s %s, %u thread%s: %.2f GB/s\n", Prog,
            Done, Total, Finished->Write ? "write" : "read", Finished->Label,
            Sz, Finished->Threads, Finished->Threads == 1 ? "" : "s",
            Finished->Best);
  else
    fprintf(stderr, "%s: [%d/%d] %s %s %s, %u thread%s: FAILED\n", Prog, Done,
            Total, Finished->Write ? "write" : "read", Finished->Label, Sz,
            Finished->Threads, Finished->Threads == 1 ? "" : "s");
}

static void addJob(JobTy **Jobs, int *N, int *Cap, JobTy J) {
  if (*N == *Cap) {
    *Cap = *Cap ? *Cap * 2 : 64;
    *Jobs = realloc(*Jobs, (size_t)*Cap * sizeof(JobTy));
  }
  (*Jobs)[(*N)++] = J;
}

static double baselineFor(const JobTy *Jobs, int N, int Write, uint64_t Size) {
  double B = 0;
  for (int I = 0; I < N; ++I)
    if (Jobs[I].Ok && Jobs[I].Write == Write && Jobs[I].Size == Size &&
        (!strcmp(Jobs[I].Mode, "host1") || !strcmp(Jobs[I].Mode, "host2")) &&
        Jobs[I].Best > B)
      B = Jobs[I].Best;
  return B;
}

static double naiveFor(const JobTy *Jobs, int N, int Write, uint64_t Size) {
  for (int I = 0; I < N; ++I)
    if (Jobs[I].Ok && Jobs[I].Write == Write && Jobs[I].Size == Size &&
        !strcmp(Jobs[I].Mode, "naive"))
      return Jobs[I].Best;
  return 0;
}

static int cmdBench(int Argc, char **Argv) {
  BenchOpts O;
  parseBench(Argc, Argv, &O);

  int NumDevices = omp_get_num_devices();
  if (NumDevices == 0)
    fatal("no OpenMP offload device is available");
  if (O.Device >= NumDevices)
    usageError("bench: --device %d: there %s only %d device%s (0..%d)",
               O.Device, NumDevices == 1 ? "is" : "are", NumDevices,
               NumDevices == 1 ? "" : "s", NumDevices - 1);
  {
    // Make sure libomptarget initialised the device before we look at it.
    void *P = omp_target_alloc(1, O.Device);
    if (!P)
      fatal("cannot allocate memory on device %d", O.Device);
    omp_target_free(P, O.Device);
  }
  PluginList L;
  loadedPlugins(&L);
  char Desc[160];
  if (!describeDevice(O.Device, &L, Desc, sizeof(Desc)))
    fatal("device %d is not served by an offload-io plugin (loaded: %s); put "
          "the offload-io library directory first in LD_LIBRARY_PATH",
          O.Device, L.Num ? L.Plugins[0].Path : "none");
  unsigned Mask;
  char Why[1024] = "";
  if (ompx_io_paths(O.Device, &Mask, Why, sizeof(Why)))
    fatal("ompx_io_paths(%d): %s", O.Device, strerror(errno));
  int HostAddressable = (Mask >> OMPX_IO_PATH_DIRECT) & 1;
  int Naive = O.Naive >= 0 ? O.Naive : !HostAddressable;

  // Paths this device can serve.
  const char *Paths[MAX_LIST];
  int NumPaths = 0;
  for (int I = 0; I < O.NumPaths; ++I) {
    int P = !strcmp(O.Paths[I], "direct")     ? OMPX_IO_PATH_DIRECT
            : !strcmp(O.Paths[I], "fastpath") ? OMPX_IO_PATH_FASTPATH
            : !strcmp(O.Paths[I], "staged")   ? OMPX_IO_PATH_STAGED
                                              : -1;
    if (P >= 0 && !(Mask & (1u << P))) {
      const char *Line = strstr(Why, O.Paths[I]);
      int Len = Line ? (int)strcspn(Line, "\n") : 0;
      fprintf(stderr, "%s: skipping path %s on device %d: %.*s\n", Prog,
              O.Paths[I], O.Device, Len, Line ? Line : "not available");
      continue;
    }
    Paths[NumPaths++] = O.Paths[I];
  }
  if (!NumPaths)
    fatal("none of the requested paths is available on device %d", O.Device);

  FILE *Csv = NULL;
  if (O.Csv && !(Csv = fopen(O.Csv, "w")))
    fatal("cannot write --csv %s: %s", O.Csv, strerror(errno));

  char Exe[PATH_MAX];
  ssize_t ExeLen = readlink("/proc/self/exe", Exe, sizeof(Exe) - 1);
  if (ExeLen <= 0)
    fatal("cannot find this program's path: %s", strerror(errno));
  Exe[ExeLen] = 0;

  uint64_t MaxSize = 0;
  for (int I = 0; I < O.NumSizes; ++I)
    if (O.Sizes[I] > MaxSize)
      MaxSize = O.Sizes[I];
  signal(SIGINT, onSignal);
  signal(SIGTERM, onSignal);
  int Created = prepareFile(O.File, MaxSize);
  char WriteFile[PATH_MAX] = "";
  if (O.Write) {
    snprintf(WriteFile, sizeof(WriteFile), "%s.write.%d", O.File,
             (int)getpid());
    int Fd = open(WriteFile, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (Fd < 0)
      fatal("cannot create %s: %s", WriteFile, strerror(errno));
    close(Fd);
  }
  double ColdRate;
  double Cached = warmFile(O.File, MaxSize, &ColdRate);

  // The jobs: per op and size, the baselines, then path x threads.
  JobTy *Jobs = NULL;
  int NumJobs = 0, Cap = 0;
  for (int W = 0; W <= O.Write; ++W)
    for (int S = 0; S < O.NumSizes; ++S) {
      JobTy Base;
      memset(&Base, 0, sizeof(Base));
      Base.Write = W;
      Base.Size = O.Sizes[S];
      Base.Threads = 1;
      Base.Label = W ? "pwrite-1t" : "pread-1t";
      Base.Mode = "host1";
      addJob(&Jobs, &NumJobs, &Cap, Base);
      Base.Threads = 2;
      Base.Label = W ? "pwrite-2t" : "pread-2t";
      Base.Mode = "host2";
      addJob(&Jobs, &NumJobs, &Cap, Base);
      if (Naive) {
        Base.Threads = 1;
        Base.Label = "naive";
        Base.Mode = "naive";
        addJob(&Jobs, &NumJobs, &Cap, Base);
      }
      for (int P = 0; P < NumPaths; ++P)
        for (int T = 0; T < O.NumThreads; ++T) {
          JobTy J = Base;
          J.Label = Paths[P];
          J.Mode = "ompx";
          J.EnvPath = Paths[P];
          J.Threads = O.Threads[T];
          addJob(&Jobs, &NumJobs, &Cap, J);
        }
    }

  // Rounds run the whole matrix again, so that load that comes and goes
  // during the run hits every configuration alike; each keeps its best.
  int Tty = isatty(2);
  int Total = NumJobs * O.Rounds;
  for (int R = 0; R < O.Rounds && !Interrupted; ++R)
    for (int I = 0; I < NumJobs && !Interrupted; ++I) {
      JobTy *J = &Jobs[I];
      int Step = R * NumJobs + I;
      if (J->Failed)
        continue;
      progress(Tty, Step, Total, J, NULL);
      JobTy Run = *J;
      runJob(&Run, Exe, &O, J->Write ? WriteFile : O.File);
      if (!Run.Ok) {
        J->Failed = 1;
        memcpy(J->Error, Run.Error, sizeof(J->Error));
      } else {
        if (!J->Runs || Run.Best > J->Best)
          J->Best = Run.Best;
        if (!J->Runs || Run.Worst < J->Worst)
          J->Worst = Run.Worst;
        J->RoundMedians[J->Runs++] = Run.Median;
        double Tmp[MAX_ROUNDS];
        memcpy(Tmp, J->RoundMedians, sizeof(double) * (size_t)J->Runs);
        qsort(Tmp, (size_t)J->Runs, sizeof(double), cmpDouble);
        J->Median = J->Runs % 2 ? Tmp[J->Runs / 2]
                                : (Tmp[J->Runs / 2 - 1] + Tmp[J->Runs / 2]) / 2;
        memcpy(J->Effective, Run.Effective, sizeof(J->Effective));
        J->Fallbacks += Run.Fallbacks;
      }
      J->Ok = !J->Failed && J->Runs > 0;
      progress(Tty, Step + 1, Total,
               Step + 1 < Total ? &Jobs[(I + 1) % NumJobs] : NULL, &Run);
    }
  if (Tty)
    progress(Tty, Total, Total, NULL, NULL);
  int Failures = 0;
  for (int I = 0; I < NumJobs; ++I)
    Failures += Jobs[I].Failed;
  if (*WriteFile)
    unlink(WriteFile);
  if (Created && !O.KeepFile)
    unlink(O.File);

  // Report.
  char Sz[32];
  formatSize(MaxSize, Sz, sizeof(Sz));
  printf("ompx-io bench: device %d (%s), %d OpenMP device%s\n", O.Device, Desc,
         NumDevices, NumDevices == 1 ? "" : "s");
  if (Created) {
    printf("file: %s, %s, created for this run", O.File, Sz);
  } else {
    struct stat St;
    char FileSz[32] = "?";
    if (!stat(O.File, &St))
      formatSize((uint64_t)St.st_size, FileSz, sizeof(FileSz));
    printf("file: %s, existing %s file, first %s used", O.File, FileSz, Sz);
  }
  if (Cached >= 0)
    printf(", %.0f%% in the page cache after warming", Cached * 100);
  printf(" (first read %.2f GB/s)\n", ColdRate);
  printf("NOTE: numbers are PAGE-CACHED: reads are served from memory, not "
         "from the storage device%s.\n",
         O.Write ? "; writes go to the page cache without fsync" : "");
  const char *Chunk = getenv("OMPX_IO_CHUNK_SIZE"),
             *Ring = getenv("OMPX_IO_RING_DEPTH");
  printf("engine: OMPX_IO_CHUNK_SIZE=%s, OMPX_IO_RING_DEPTH=%s; "
         "OMPX_IO_THREADS and OMPX_IO_PATH set per row\n",
         Chunk ? Chunk : "8M (default)", Ring ? Ring : "2 (default)");
  printf("baselines: plain %s into a %s host buffer with 1 and 2 threads "
         "(halves)%s\n",
         O.Write ? "pread/pwrite" : "pread",
         O.MallocBaseline ? "malloc'd" : "page-aligned",
         Naive ? "; naive = pread + omp_target_memcpy" : "");
  printf("GB/s = 1e9 bytes/s, best of %d sample%s (each >= 64 MiB moved)",
         O.Repeat, O.Repeat == 1 ? "" : "s");
  if (O.Rounds > 1)
    printf(" in each of %d interleaved rounds (median: of the rounds' "
           "medians)",
           O.Rounds);
  printf("; x base = / the better of the 1- and 2-thread baselines at that "
         "size\n\n");
  printf("%-5s  %-12s %9s %7s %9s %9s %7s%s\n", "op", "path", "size", "threads",
         "GB/s", "median", "x base", Naive ? "  x naive" : "");
  for (int I = 0; I < NumJobs; ++I) {
    const JobTy *J = &Jobs[I];
    char Label[40];
    if (J->Ok && !strcmp(J->Mode, "ompx") && strcmp(J->Label, J->Effective))
      snprintf(Label, sizeof(Label), "%s(%s)", J->Label, J->Effective);
    else
      snprintf(Label, sizeof(Label), "%s", J->Label);
    formatSize(J->Size, Sz, sizeof(Sz));
    if (I && (Jobs[I - 1].Size != J->Size || Jobs[I - 1].Write != J->Write))
      printf("\n");
    if (!J->Ok) {
      if (I < NumJobs && (J->Error[0] || !Interrupted))
        printf("%-5s  %-12s %9s %7u %9s\n", J->Write ? "write" : "read", Label,
               Sz, J->Threads, J->Error[0] ? "FAILED" : "not run");
      continue;
    }
    double Base = baselineFor(Jobs, NumJobs, J->Write, J->Size);
    double NaiveRate = naiveFor(Jobs, NumJobs, J->Write, J->Size);
    printf("%-5s  %-12s %9s %7u %9.2f %9.2f %7.2f", J->Write ? "write" : "read",
           Label, Sz, J->Threads, J->Best, J->Median,
           Base > 0 ? J->Best / Base : 0.0);
    if (Naive)
      printf("  %7.2f", NaiveRate > 0 ? J->Best / NaiveRate : 0.0);
    if (J->Fallbacks)
      printf("  (%llu fallbacks)", J->Fallbacks);
    printf("\n");
  }
  if (Failures) {
    printf("\nFailures:\n");
    for (int I = 0; I < NumJobs; ++I)
      if (!Jobs[I].Ok && Jobs[I].Error[0]) {
        formatSize(Jobs[I].Size, Sz, sizeof(Sz));
        printf("  %s %s %s %u threads: %s\n", Jobs[I].Write ? "write" : "read",
               Jobs[I].Label, Sz, Jobs[I].Threads, Jobs[I].Error);
      }
  }
  if (Csv) {
    fprintf(Csv, "op,path,effective_path,size_bytes,threads,samples,gbps_best,"
                 "gbps_median,gbps_worst,baseline_gbps,ratio,page_cached,"
                 "rounds\n");
    for (int I = 0; I < NumJobs; ++I) {
      const JobTy *J = &Jobs[I];
      if (!J->Ok)
        continue;
      double Base = baselineFor(Jobs, NumJobs, J->Write, J->Size);
      fprintf(Csv, "%s,%s,%s,%llu,%u,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%d,%d\n",
              J->Write ? "write" : "read", J->Label,
              strcmp(J->Mode, "ompx") ? J->Label : J->Effective,
              (unsigned long long)J->Size, J->Threads, O.Repeat, J->Best,
              J->Median, J->Worst, Base, Base > 0 ? J->Best / Base : 0.0,
              Cached >= 0.99, J->Runs);
    }
    if (fclose(Csv))
      fatal("writing %s: %s", O.Csv, strerror(errno));
    fprintf(stderr, "%s: wrote %s\n", Prog, O.Csv);
  }
  if (Interrupted)
    fatal("interrupted");
  return Failures ? 1 : 0;
}

//===----------------------------------------------------------------------===//
// main
//===----------------------------------------------------------------------===//

static void usage(FILE *Out) {
  fprintf(
      Out,
      "Usage: ompx-io <command> [options]\n"
      "\n"
      "Commands:\n"
      "  info     list the OpenMP devices, the ompx_io transfer paths each can "
      "use\n"
      "           (and why the others are unavailable), and the engine "
      "settings\n"
      "  bench    measure file <-> device throughput per path, size and "
      "thread\n"
      "           count against plain pread baselines ('ompx-io bench "
      "--help')\n"
      "\n"
      "The offload-io plugins must be the ones libomptarget loads: put their\n"
      "directory (build/lib) first in LD_LIBRARY_PATH.\n"
      "Engine environment: OMPX_IO_THREADS, OMPX_IO_CHUNK_SIZE, "
      "OMPX_IO_RING_DEPTH,\n"
      "OMPX_IO_PATH=auto|direct|fastpath|staged, OMPX_IO_INFO.\n");
}

int main(int Argc, char **Argv) {
  if (Argc >= 2 && !strcmp(Argv[1], "__child"))
    return cmdChild(Argc - 2, Argv + 2);
  if (Argc < 2)
    usageError("missing command (info or bench)");
  const char *Cmd = Argv[1];
  if (!strcmp(Cmd, "-h") || !strcmp(Cmd, "--help") || !strcmp(Cmd, "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(Cmd, "info")) {
    if (Argc == 3 && (!strcmp(Argv[2], "-h") || !strcmp(Argv[2], "--help"))) {
      printf("Usage: ompx-io info\n  Lists the OpenMP devices, their "
             "ompx_io transfer paths and the engine settings in force.\n");
      return 0;
    }
    return cmdInfo(Argc - 2, Argv + 2);
  }
  if (!strcmp(Cmd, "bench"))
    return cmdBench(Argc - 2, Argv + 2);
  usageError("unknown command '%s' (expected info or bench)", Cmd);
}

// SPDX-License-Identifier: Apache-2.0
//
// ceiling-bench: what bounds a staged host <-> device copy, measured on the
// machine at hand, beside what the plugin reaches.
//
//   --host      the host's own copy rates with 1..N threads (--threads):
//               memcpy between touched malloc buffers, memcpy into pinned
//               memory (the staging copy of an upload), memcpy out of pinned
//               memory into fresh pages (first touch, as a download into a
//               new buffer) and into touched ones, and pread of a
//               page-cached file into pinned memory: into one large buffer,
//               and into two reused 2 MiB buffers per thread, as the file
//               engine's workers read into their rings (the CPU side of a
//               staged file read);
//   --link      the DMA rate from and to pinned memory
//               (llvm_omp_target_alloc_host) with omp_target_memcpy: the
//               link's ceiling;
//   --pageable  omp_target_memcpy H2D and D2H from and to touched malloc
//               memory: what the plugin reaches under the environment it
//               was started with (OFFLOADIO_COPY_THREADS, ...);
//   --file      ompx_target_pread of a page-cached file of --file-size
//               bytes (default --size) into device memory (built with
//               -DBENCH_OMPX_IO; our plugin only).
//
// With none of them, all that were built in. Every figure is the best of
// --repeat runs, in GB/s (1e9 bytes/s). Lines starting with "RESULT " are
// for run-ceiling-bench.sh. Nothing is asserted.
#include "bench-util.h"

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef BENCH_OMPX_IO
#include "ompx_io.h"
#endif

void *llvm_omp_target_alloc_host(size_t Size, int Device);
void llvm_omp_target_free_host(void *Ptr, int Device);

#define MAX_THREADS 64

static size_t Size = (size_t)2 << 30;
/// Bytes of the file of --file (--file-size; default Size).
static size_t FileSize = 0;
static int Repeat = 3;
static int Dev = 0;
static int Initial;

static int parseSize(const char *S, size_t *Out) {
  char *End;
  errno = 0;
  unsigned long long N = strtoull(S, &End, 10);
  if (errno || End == S || N == 0)
    return -1;
  switch (*End) {
  case 'k':
  case 'K':
    N <<= 10, ++End;
    break;
  case 'm':
  case 'M':
    N <<= 20, ++End;
    break;
  case 'g':
  case 'G':
    N <<= 30, ++End;
    break;
  default:
    break;
  }
  if (*End)
    return -1;
  *Out = (size_t)N;
  return 0;
}

static void die(const char *What) {
  fprintf(stderr, "ceiling-bench: %s: %s\n", What, strerror(errno));
  exit(1);
}

/// One kind of host copy, split into equal slices, one per thread.
/// PreadRingCopy reads each slice in RingChunk pieces into two buffers of
/// its thread, taken from the destination, in turn.
enum CopyKind { MemcpyCopy, PreadCopy, PreadRingCopy };

/// The file engine's default chunk (OMPX_IO_CHUNK_SIZE), and its ring depth.
#define RING_CHUNK ((size_t)2 << 20)
#define RING_DEPTH 2

struct Job {
  enum CopyKind Kind;
  int Index;
  char *Dst;
  const char *Src;
  int Fd;
  size_t Offset, Len;
  pthread_barrier_t *Start;
  int Failed;
  double Began, Ended; ///< Each thread times itself: the main thread may
                       ///< run only after the copies are done.
};

static void *runSlice(void *Arg) {
  struct Job *J = (struct Job *)Arg;
  pthread_barrier_wait(J->Start);
  J->Began = benchNow();
  if (J->Kind == MemcpyCopy) {
    memcpy(J->Dst + J->Offset, J->Src + J->Offset, J->Len);
    J->Ended = benchNow();
    return NULL;
  }
  // pread in pieces: 8 MiB into the slice's place, or a ring chunk into
  // the thread's next ring buffer.
  int Ring = J->Kind == PreadRingCopy;
  size_t Piece = Ring ? RING_CHUNK : (8u << 20);
  for (size_t Done = 0, K = 0; Done < J->Len; K = (K + 1) % RING_DEPTH) {
    size_t N = J->Len - Done < Piece ? J->Len - Done : Piece;
    char *To = Ring ? J->Dst + ((size_t)J->Index * RING_DEPTH + K) * RING_CHUNK
                    : J->Dst + J->Offset + Done;
    ssize_t R = pread(J->Fd, To, N, (off_t)(J->Offset + Done));
    if (R <= 0) {
      J->Failed = 1;
      return NULL;
    }
    Done += (size_t)R;
  }
  J->Ended = benchNow();
  return NULL;
}

/// Seconds for \p Threads threads to copy Size bytes: from the first
/// thread's start to the last one's end.
static double timedCopy(enum CopyKind Kind, char *Dst, const char *Src,
                        int Fd, int Threads) {
  pthread_t T[MAX_THREADS];
  struct Job J[MAX_THREADS];
  pthread_barrier_t Start;
  pthread_barrier_init(&Start, NULL, (unsigned)Threads + 1);
  size_t Slice = (Size / (size_t)Threads + 4095) & ~(size_t)4095;
  for (int I = 0; I < Threads; ++I) {
    size_t Off = (size_t)I * Slice;
    J[I] = (struct Job){Kind, I, Dst, Src, Fd, Off,
                        Off >= Size ? 0 : (Size - Off < Slice ? Size - Off : Slice),
                        &Start, 0, 0, 0};
    if (pthread_create(&T[I], NULL, runSlice, &J[I]))
      die("pthread_create");
  }
  pthread_barrier_wait(&Start);
  int Failed = 0;
  double First = 0, Last = 0;
  for (int I = 0; I < Threads; ++I) {
    pthread_join(T[I], NULL);
    Failed |= J[I].Failed;
    if (I == 0 || J[I].Began < First)
      First = J[I].Began;
    if (J[I].Ended > Last)
      Last = J[I].Ended;
  }
  double Secs = Last - First;
  pthread_barrier_destroy(&Start);
  if (Failed) {
    fprintf(stderr, "ceiling-bench: pread of the file failed\n");
    exit(1);
  }
  return Secs;
}

static double gbps(double Secs) { return (double)Size / Secs / 1e9; }

/// Best rate of \p Repeat runs; \p Fresh gives every run a new destination
/// (first touch) instead of \p Dst.
static double bestCopy(enum CopyKind Kind, char *Dst, const char *Src, int Fd,
                       int Threads, int Fresh) {
  double Best = 0;
  for (int R = 0; R < Repeat; ++R) {
    char *To = Dst;
    if (Fresh) {
      To = mmap(NULL, Size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                -1, 0);
      if (To == MAP_FAILED)
        die("mmap");
    }
    double Rate = gbps(timedCopy(Kind, To, Src, Fd, Threads));
    if (Fresh)
      munmap(To, Size);
    if (Rate > Best)
      Best = Rate;
  }
  return Best;
}

static char *touchedBuffer(unsigned char Value) {
  char *P = malloc(Size);
  if (!P)
    die("malloc");
  memset(P, Value, Size);
  return P;
}

/// A page-cached file of Size bytes written from \p Data; its path goes
/// into \p Path. The caller unlinks it.
static int cachedFile(const char *Data, char *Path, size_t PathLen) {
  const char *Dir = getenv("TMPDIR");
  snprintf(Path, PathLen, "%s/ceiling-bench.XXXXXX", Dir && *Dir ? Dir : "/tmp");
  int Fd = mkstemp(Path);
  if (Fd < 0)
    die("mkstemp");
  for (size_t Done = 0; Done < Size;) {
    ssize_t W = pwrite(Fd, Data + Done, Size - Done, (off_t)Done);
    if (W <= 0)
      die("pwrite");
    Done += (size_t)W;
  }
  // Read it once so that every measured read comes from the page cache.
  char *Scratch = malloc(8u << 20);
  if (!Scratch)
    die("malloc");
  for (size_t Done = 0; Done < Size;) {
    ssize_t R = pread(Fd, Scratch, 8u << 20, (off_t)Done);
    if (R <= 0)
      die("pread");
    Done += (size_t)R;
  }
  free(Scratch);
  return Fd;
}

static void hostCeilings(const int *Threads, int NThreads, char *Pinned) {
  char *Src = touchedBuffer(1), *Dst = touchedBuffer(2);
  char Path[512];
  int Fd = cachedFile(Src, Path, sizeof(Path));
  printf("host copy rates, GB/s, best of %d (%zu MiB each)\n", Repeat,
         Size >> 20);
  printf("%7s %10s %12s %14s %14s %14s %12s\n", "threads", "memcpy",
         "to pinned", "pinned->fresh", "pinned->touch", "pread->pinned",
         "pread->ring");
  for (int I = 0; I < NThreads; ++I) {
    int T = Threads[I];
    double M = bestCopy(MemcpyCopy, Dst, Src, -1, T, 0);
    double ToPinned = bestCopy(MemcpyCopy, Pinned, Src, -1, T, 0);
    double Fresh = bestCopy(MemcpyCopy, NULL, Pinned, -1, T, 1);
    double Touched = bestCopy(MemcpyCopy, Dst, Pinned, -1, T, 0);
    double Read = bestCopy(PreadCopy, Pinned, NULL, Fd, T, 0);
    // 0 (not measured) when the rings of T threads do not fit in Pinned.
    double RingRead = (size_t)T * RING_DEPTH * RING_CHUNK <= Size
                          ? bestCopy(PreadRingCopy, Pinned, NULL, Fd, T, 0)
                          : 0;
    printf("%7d %10.2f %12.2f %14.2f %14.2f %14.2f %12.2f\n", T, M, ToPinned,
           Fresh, Touched, Read, RingRead);
    printf("RESULT host threads=%d memcpy=%.3f to_pinned=%.3f "
           "pinned_to_fresh=%.3f pinned_to_touched=%.3f pread_to_pinned=%.3f "
           "pread_to_ring=%.3f\n",
           T, M, ToPinned, Fresh, Touched, Read, RingRead);
  }
  close(Fd);
  unlink(Path);
  free(Src);
  free(Dst);
}

/// Best H2D and D2H rates of omp_target_memcpy between \p Host and a device
/// buffer.
static void targetCopies(char *Host, double *H2D, double *D2H) {
  void *D = omp_target_alloc(Size, Dev);
  if (!D) {
    fprintf(stderr, "ceiling-bench: omp_target_alloc of %zu bytes failed\n",
            Size);
    exit(1);
  }
  *H2D = *D2H = 0;
  for (int R = 0; R < Repeat; ++R) {
    double T0 = benchNow();
    if (omp_target_memcpy(D, Host, Size, 0, 0, Dev, Initial))
      exit(1);
    double Up = gbps(benchNow() - T0);
    T0 = benchNow();
    if (omp_target_memcpy(Host, D, Size, 0, 0, Initial, Dev))
      exit(1);
    double Down = gbps(benchNow() - T0);
    if (Up > *H2D)
      *H2D = Up;
    if (Down > *D2H)
      *D2H = Down;
  }
  omp_target_free(D, Dev);
}

#ifdef BENCH_OMPX_IO
static void fileToDevice(void) {
  char *Src = touchedBuffer(3);
  char Path[512];
  int Fd = cachedFile(Src, Path, sizeof(Path));
  free(Src);
  void *D = omp_target_alloc(Size, Dev);
  if (!D)
    exit(1);
  double Best = 0;
  for (int R = 0; R < Repeat; ++R) {
    double T0 = benchNow();
    ssize_t N = ompx_target_pread(Fd, D, Size, 0, Dev);
    double Secs = benchNow() - T0;
    if (N != (ssize_t)Size) {
      fprintf(stderr, "ceiling-bench: ompx_target_pread returned %zd: %s\n", N,
              ompx_io_last_error());
      exit(1);
    }
    if (gbps(Secs) > Best)
      Best = gbps(Secs);
  }
  printf("page-cached file -> device, ompx_target_pread: %.2f GB/s\n", Best);
  printf("RESULT file to_device=%.3f\n", Best);
  omp_target_free(D, Dev);
  close(Fd);
  unlink(Path);
}
#endif

int main(int Argc, char **Argv) {
  int Threads[MAX_THREADS] = {1, 2, 4, 8, 12, 16}, NThreads = 6;
  int Host = 0, Link = 0, Pageable = 0, File = 0;
  for (int I = 1; I < Argc; ++I) {
    const char *A = Argv[I];
    if (!strcmp(A, "--host"))
      Host = 1;
    else if (!strcmp(A, "--link"))
      Link = 1;
    else if (!strcmp(A, "--pageable"))
      Pageable = 1;
    else if (!strcmp(A, "--file"))
      File = 1;
    else if (!strcmp(A, "--size") && I + 1 < Argc) {
      if (parseSize(Argv[++I], &Size)) {
        fprintf(stderr, "ceiling-bench: bad --size '%s'\n", Argv[I]);
        return 2;
      }
    } else if (!strcmp(A, "--file-size") && I + 1 < Argc) {
      if (parseSize(Argv[++I], &FileSize)) {
        fprintf(stderr, "ceiling-bench: bad --file-size '%s'\n", Argv[I]);
        return 2;
      }
    } else if (!strcmp(A, "--repeat") && I + 1 < Argc) {
      Repeat = atoi(Argv[++I]);
      if (Repeat < 1)
        Repeat = 1;
    } else if (!strcmp(A, "--threads") && I + 1 < Argc) {
      NThreads = 0;
      for (char *S = Argv[++I], *End; *S && NThreads < MAX_THREADS; S = End) {
        long T = strtol(S, &End, 10);
        if (End == S || T < 1 || T > MAX_THREADS) {
          fprintf(stderr, "ceiling-bench: bad --threads list '%s'\n", Argv[I]);
          return 2;
        }
        Threads[NThreads++] = (int)T;
        if (*End == ',')
          ++End;
      }
    } else {
      fprintf(stderr,
              "usage: ceiling-bench [--host] [--link] [--pageable] [--file] "
              "[--size BYTES] [--file-size BYTES] [--repeat N] "
              "[--threads 1,2,4,...]\n");
      return 2;
    }
  }
  if (!Host && !Link && !Pageable && !File) {
    Host = Link = Pageable = 1;
#ifdef BENCH_OMPX_IO
    File = 1;
#endif
  }
#ifndef BENCH_OMPX_IO
  if (File) {
    fprintf(stderr, "ceiling-bench: --file needs a build with -DBENCH_OMPX_IO\n");
    return 2;
  }
#endif
  Initial = omp_get_initial_device();
  if (omp_get_num_devices() < 1) {
    fprintf(stderr, "ceiling-bench: no offload device\n");
    return 1;
  }
  benchPrintPlugin(BENCH_PLUGIN_PREFIX);
  char *Pinned = NULL;
  if (Host || Link) {
    Pinned = llvm_omp_target_alloc_host(Size, Dev);
    if (!Pinned) {
      fprintf(stderr, "ceiling-bench: llvm_omp_target_alloc_host failed\n");
      return 1;
    }
    memset(Pinned, 0, Size);
  }
  if (Host)
    hostCeilings(Threads, NThreads, Pinned);
  if (Link) {
    double H2D, D2H;
    targetCopies(Pinned, &H2D, &D2H);
    printf("pinned (llvm_omp_target_alloc_host) <-> device: H2D %.2f GB/s, "
           "D2H %.2f GB/s\n", H2D, D2H);
    printf("RESULT link h2d=%.3f d2h=%.3f\n", H2D, D2H);
  }
  if (Pinned)
    llvm_omp_target_free_host(Pinned, Dev);
  if (Pageable) {
    char *M = touchedBuffer(4);
    double H2D, D2H;
    targetCopies(M, &H2D, &D2H);
    printf("malloc <-> device: H2D %.2f GB/s, D2H %.2f GB/s\n", H2D, D2H);
    printf("RESULT pageable h2d=%.3f d2h=%.3f\n", H2D, D2H);
    free(M);
  }
#ifdef BENCH_OMPX_IO
  if (File) {
    // The file step moves FileSize bytes; every other step is done.
    if (FileSize)
      Size = FileSize;
    fileToDevice();
  }
#endif
  return 0;
}

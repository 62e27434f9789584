// SPDX-License-Identifier: Apache-2.0
//
// Experiment: page-cached file -> device without a CPU copy. The file is
// mapped (MAP_SHARED, PROT_READ), each chunk's page-cache pages are pinned
// with cuMemHostRegister(READ_ONLY) and copied by DMA, then unregistered.
// Beside it: pinned cuMemcpy (the link) and pread into pinned memory (the
// CPU copy the staged path makes). Usage: mapped-read-probe FILE SIZE_MIB
// CHUNKS_MIB(list) THREADS(list).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUctx;
typedef void *CUstream;
typedef void *CUevent;
static CUresult (*cuInit)(unsigned);
static CUresult (*cuDeviceGet)(int *, int);
static CUresult (*cuDevicePrimaryCtxRetain)(CUctx *, int);
static CUresult (*cuCtxSetCurrent)(CUctx);
static CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*cuMemHostAlloc)(void **, size_t, unsigned);
static CUresult (*cuMemHostRegister)(void *, size_t, unsigned);
static CUresult (*cuMemHostUnregister)(void *);
static CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
static CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
static CUresult (*cuStreamCreate)(CUstream *, unsigned);
static CUresult (*cuStreamSynchronize)(CUstream);
static CUresult (*cuEventCreate)(CUevent *, unsigned);
static CUresult (*cuEventRecord)(CUevent, CUstream);
static CUresult (*cuEventSynchronize)(CUevent);

#define CK(X)                                                                  \
  do {                                                                         \
    CUresult R_ = (X);                                                         \
    if (R_) {                                                                  \
      fprintf(stderr, "%s failed: %d (line %d)\n", #X, R_, __LINE__);         \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static double now(void) {
  struct timespec T;
  clock_gettime(CLOCK_MONOTONIC, &T);
  return T.tv_sec + T.tv_nsec * 1e-9;
}

static CUctx Ctx;
static CUdeviceptr Dev;
static char *Map;
static int Fd;
static size_t Size, Chunk;
static atomic_size_t Next;
// 0 register+DMA, 1 register only, 2 pread+DMA, 3 hybrid, 4 memcpy from a
// mapping of the whole file made per run, 5 memcpy from a populated
// mapping made per chunk, 6 DMA alone out of the pread+DMA buffers (what
// the link carries in chunks of that size, from that many streams).
static int Mode;
static char *RunMap;
static double RegSeconds[64];
static void *PinnedBufs[64][2];
static size_t PreadChunk = 16 << 20; // pread+DMA chunks (modes 2 and 3)
static size_t RegBytes[64];

static void *worker(void *Arg) {
  int Id = (int)(intptr_t)Arg;
  CK(cuCtxSetCurrent(Ctx));
  CUstream S;
  CK(cuStreamCreate(&S, 1));
  CUevent Ev[2];
  CK(cuEventCreate(&Ev[0], 2));
  CK(cuEventCreate(&Ev[1], 2));
  void **Pinned = PinnedBufs[Id];
  // Hybrid: thread 0 pins page-cache pages, the others pread.
  int Reads = Mode == 2 || Mode >= 4 || (Mode == 3 && Id != 0);
  size_t MyChunk = Reads ? PreadChunk : Chunk;
  RegBytes[Id] = 0;
  size_t Prev = (size_t)-1;
  int K = 0;
  double Reg = 0;
  for (;;) {
    size_t Off = atomic_fetch_add(&Next, MyChunk);
    if (Off >= Size)
      break;
    size_t Len = Size - Off < MyChunk ? Size - Off : MyChunk;
    if (Reads) {
      CK(cuEventSynchronize(Ev[K]));
      if (Mode == 4) {
        memcpy(Pinned[K], RunMap + Off, Len);
      } else if (Mode == 5) {
        char *M = mmap(NULL, Len, PROT_READ, MAP_SHARED | MAP_POPULATE, Fd,
                       Off);
        if (M == MAP_FAILED) { perror("mmap"); exit(1); }
        memcpy(Pinned[K], M, Len);
        munmap(M, Len);
      }
      size_t D = Mode >= 4 ? Len : 0;
      while (D < Len) {
        ssize_t N = pread(Fd, (char *)Pinned[K] + D, Len - D, Off + D);
        if (N <= 0) { perror("pread"); exit(1); }
        D += N;
      }
      CK(cuMemcpyHtoDAsync(Dev + Off, Pinned[K], Len, S));
      CK(cuEventRecord(Ev[K], S));
      K ^= 1;
      continue;
    }
    double T0 = now();
    CK(cuMemHostRegister(Map + Off, Len, 0x08 /* READ_ONLY */));
    RegBytes[Id] += Len;
    Reg += now() - T0;
    if (Mode == 0) {
      CK(cuMemcpyHtoDAsync(Dev + Off, Map + Off, Len, S));
      CK(cuEventRecord(Ev[K], S));
    }
    // Unregister the previous chunk once its copy is done.
    if (Prev != (size_t)-1) {
      CK(cuEventSynchronize(Ev[K ^ 1]));
      T0 = now();
      CK(cuMemHostUnregister(Map + Prev));
      Reg += now() - T0;
    }
    Prev = Off;
    K ^= 1;
  }
  CK(cuStreamSynchronize(S));
  if (Prev != (size_t)-1 && !Reads)
    CK(cuMemHostUnregister(Map + Prev));
  RegSeconds[Id] = Reg;
  return NULL;
}

static double run(int Threads, int M) {
  pthread_t T[64];
  Mode = M;
  atomic_store(&Next, 0);
  double T0 = now();
  if (M == 4) {
    RunMap = mmap(NULL, Size, PROT_READ, MAP_SHARED, Fd, 0);
    if (RunMap == MAP_FAILED) { perror("mmap"); exit(1); }
  }
  for (int I = 0; I < Threads; ++I)
    pthread_create(&T[I], NULL, worker, (void *)(intptr_t)I);
  for (int I = 0; I < Threads; ++I)
    pthread_join(T[I], NULL);
  if (M == 4)
    munmap(RunMap, Size);
  return Size / (now() - T0) / 1e9;
}

static void check(void) {
  // Sample 4 KiB at 64 places against the file.
  char A[4096], B[4096];
  for (int I = 0; I < 64; ++I) {
    size_t Off = (Size / 64) * I;
    CK(cuMemcpyDtoH(A, Dev + Off, sizeof A));
    if (pread(Fd, B, sizeof B, Off) != sizeof B || memcmp(A, B, sizeof A)) {
      printf("DATA MISMATCH at %zu\n", Off);
      exit(1);
    }
  }
}

int main(int Argc, char **Argv) {
  if (Argc < 5) {
    fprintf(stderr, "usage: %s FILE SIZE_MIB CHUNKS_MIB THREADS\n", Argv[0]);
    return 2;
  }
  void *L = dlopen("libcuda.so.1", RTLD_NOW);
  if (!L) { fprintf(stderr, "%s\n", dlerror()); return 1; }
#define SYM(N, S) *(void **)&N = dlsym(L, S); if (!N) { fprintf(stderr, "no %s\n", S); return 1; }
  SYM(cuInit, "cuInit"); SYM(cuDeviceGet, "cuDeviceGet");
  SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  SYM(cuCtxSetCurrent, "cuCtxSetCurrent"); SYM(cuMemAlloc, "cuMemAlloc_v2");
  SYM(cuMemHostAlloc, "cuMemHostAlloc");
  SYM(cuMemHostRegister, "cuMemHostRegister_v2");
  SYM(cuMemHostUnregister, "cuMemHostUnregister");
  SYM(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  SYM(cuMemcpyDtoH, "cuMemcpyDtoH_v2"); SYM(cuStreamCreate, "cuStreamCreate");
  SYM(cuStreamSynchronize, "cuStreamSynchronize");
  SYM(cuEventCreate, "cuEventCreate"); SYM(cuEventRecord, "cuEventRecord");
  SYM(cuEventSynchronize, "cuEventSynchronize");
  if (!cuDevicePrimaryCtxRetain) return 1;
  Size = (size_t)atol(Argv[2]) << 20;
  if (getenv("PROBE_READ_MIB"))
    PreadChunk = (size_t)atol(getenv("PROBE_READ_MIB")) << 20;
  Fd = open(Argv[1], O_RDWR | O_CREAT, 0644);
  if (Fd < 0) { perror("open"); return 1; }
  struct stat St;
  fstat(Fd, &St);
  if ((size_t)St.st_size < Size) {
    char *B = malloc(64 << 20);
    for (size_t Off = 0; Off < Size; Off += 64 << 20) {
      for (size_t I = 0; I < (64 << 20) / 8; ++I)
        ((uint64_t *)B)[I] = (Off + I * 8) * 0x9E3779B97F4A7C15ull;
      if (pwrite(Fd, B, 64 << 20, Off) != 64 << 20) { perror("pwrite"); return 1; }
    }
    free(B);
  }
  // Page the file in.
  {
    char *B = malloc(64 << 20);
    for (size_t Off = 0; Off < Size; Off += 64 << 20)
      if (pread(Fd, B, 64 << 20, Off) < 0) { perror("pread"); return 1; }
    free(B);
  }
  int D;
  CK(cuInit(0));
  CK(cuDeviceGet(&D, 0));
  CK(cuDevicePrimaryCtxRetain(&Ctx, D));
  CK(cuCtxSetCurrent(Ctx));
  CK(cuMemAlloc(&Dev, Size));
  Map = mmap(NULL, Size, PROT_READ, MAP_SHARED, Fd, 0);
  if (Map == MAP_FAILED) { perror("mmap"); return 1; }
  printf("file %s, %zu MiB, page cached\n", Argv[1], Size >> 20);
  // The link: pinned copies, 4 threads x 256 MiB chunks.
  Chunk = 256 << 20;
  {
    void *P;
    CK(cuMemHostAlloc(&P, Chunk, 0));
    CUstream S;
    CK(cuStreamCreate(&S, 1));
    double T0 = now();
    for (size_t Off = 0; Off < Size; Off += Chunk)
      CK(cuMemcpyHtoDAsync(Dev + Off, P, Chunk, S));
    CK(cuStreamSynchronize(S));
    printf("pinned cuMemcpyHtoDAsync 256 MiB x %zu: %.2f GB/s\n", Size / Chunk,
           Size / (now() - T0) / 1e9);
  }
  char *ChunkList = strdup(Argv[3]), *CS, *TS;
  for (char *C = strtok_r(ChunkList, ",", &CS); C; C = strtok_r(NULL, ",", &CS)) {
    Chunk = (size_t)atol(C) << 20;
    char *ThreadList = strdup(Argv[4]);
    for (char *Tn = strtok_r(ThreadList, ",", &TS); Tn;
         Tn = strtok_r(NULL, ",", &TS)) {
      int Threads = atoi(Tn);
      for (int I = 0; I < Threads; ++I)
        for (int K = 0; K < 2; ++K)
          if (!PinnedBufs[I][K])
            CK(cuMemHostAlloc(&PinnedBufs[I][K], PreadChunk, 0));
      for (int M = 0; M < 7; ++M) {
        if (getenv("PROBE_MODES") && !strchr(getenv("PROBE_MODES"), '0' + M))
          continue;
        double Best = 0, RegMax = 0;
        for (int R = 0; R < 3; ++R) {
          double G = run(Threads, M);
          if (G > Best) Best = G;
          for (int I = 0; I < Threads; ++I)
            if (RegSeconds[I] > RegMax) RegMax = RegSeconds[I];
          RegSeconds[0] = 0;
        }
        // Modes 1 and 6 move no file data to the device.
        if (M != 1 && M != 6)
          check();
        static const char *Names[] = {"register+DMA", "register only",
                                      "pread+DMA",    "hybrid",
                                      "map+memcpy",   "chunkmap+memcpy",
                                      "DMA only"};
        printf("chunk %4zu MiB threads %2d %-14s %7.2f GB/s (best of 3)",
               M >= 2 ? PreadChunk >> 20 : Chunk >> 20, Threads, Names[M],
               Best);
        if (M == 3)
          printf(", %.0f%% pinned in place (last run)",
                 100.0 * RegBytes[0] / Size);
        printf("\n");
        fflush(stdout);
      }
    }
  }
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
//
// What two or more devices of one process give together, beside one device
// alone. Each figure is the best of 3 rounds, SIZE bytes per device:
//   a. one host region, locked once (llvm_omp_target_lock_mem via device 0),
//      copied with omp_target_memcpy to device 0 alone, to device 1 alone,
//      and to every device at once (one host thread per device);
//   b. the same from pageable (unlocked) malloc memory: device 0, then all;
//   c. a page-cached FILE (SIZE x DEVICES bytes of a known pattern, written
//      when it is smaller or differs, then read once with pread):
//      ompx_target_pread of SIZE into device 0 alone, then every device
//      reading its own slice at once (one host thread per device);
//   d. the batch API: one ompx_io_batch_submit of 16 MiB reads covering
//      every device's slice, beside one batch loading device 0's slice;
//   e. a peer copy, omp_target_memcpy device 0 -> device 1.
// Aggregates are the total bytes over the wall time; each ratio is the
// aggregate over N times the best single-device figure of its group (the
// node-scale targets ask 0.9), and for pageable copies also over the host's
// own memcpy rate with the threads those copies use (the copy helpers of N
// devices and the N callers), measured in the same run: the target is 0.9 x
// the smaller bound. The spread is the fastest device's rate over the
// slowest's when all run at once (target: within 20 %). Device data is
// checked after every measurement (64 samples of 4 KiB copied back); a
// difference or a failed call exits 1. Prints figures, asserts nothing else;
// a summary block ends the output. FILE is left in place for the caller.
// Usage: multi-device-bench FILE SIZE_MIB [DEVICES] [THREADS]
//   DEVICES: use devices 0..DEVICES-1 (default all; at least 2, else exit 2)
//   THREADS: the file engine's workers, set as OMPX_IO_THREADS (default:
//            the engine's own).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ompx_io.h"
#include "ompx_lock.h"

void *llvm_omp_target_lock_mem(void *Ptr, size_t Size, int Device);
void llvm_omp_target_unlock_mem(void *Ptr, int Device);

#define MAX_DEVICES 64
#define ROUNDS 3
#define SAMPLE 4096
#define SAMPLES 64
#define BATCH_OP ((size_t)16 << 20)
#define FILE_SALT 0
#define LOCKED_SALT 1
#define PAGEABLE_SALT 2

enum KindTy { Copy, FileRead, Batch, Peer };

/// One measurement: devices First..First+Count-1, each loaded with SIZE
/// bytes from Src (Copy), its own file slice (FileRead, Batch) or device 0
/// (Peer); Salt is the pattern its data must show.
struct RunTy {
  enum KindTy Kind;
  const char *Src;
  unsigned Salt;
  int First, Count;
};

static struct {
  size_t Size; // Bytes per device.
  int NumDevs, Host, Fd, Bad;
  char *Dev[MAX_DEVICES];
  char Back[SAMPLE];
} B;

static struct {
  char Name[32];
  /// Rate / (N x Single), or 0; Spread: fastest device / slowest, or 0.
  double Rate, Ratio, Spread;
} Rows[16];
static int NumRows;
/// The process's budget (threads per device in use), and the copy helpers
/// of one device's copy and its caller.
static ompx_io_process_budget_t Budget;
static unsigned Copiers;

static double now(void) {
  struct timespec T;
  clock_gettime(CLOCK_MONOTONIC, &T);
  return T.tv_sec + T.tv_nsec * 1e-9;
}

static uint64_t patternAt(uint64_t Off, unsigned Salt) {
  return (Off ^ (uint64_t)Salt << 56) * 0x9E3779B97F4A7C15ull;
}

static void fillPattern(char *Buf, size_t Size, uint64_t Base, unsigned Salt) {
  for (size_t I = 0; I < Size; I += 8)
    *(uint64_t *)(Buf + I) = patternAt(Base + I, Salt);
}

static int matchesPattern(const char *Buf, size_t Size, uint64_t Base,
                          unsigned Salt) {
  for (size_t I = 0; I < Size; I += 8)
    if (*(const uint64_t *)(Buf + I) != patternAt(Base + I, Salt))
      return 0;
  return 1;
}

static void fail(const char *What) {
  fprintf(stderr, "multi-device-bench: %s: %s\n  %s\n", What, strerror(errno),
          ompx_io_last_error());
  exit(1);
}

/// Reads (Write 0) or writes the first Total bytes of the file in 16 MiB
/// chunks; a read checks the pattern. 1 when complete (and matching).
static int fileChunks(char *Buf, size_t Total, int Write) {
  int Good = 1;
  for (size_t Off = 0; Off < Total; Off += BATCH_OP) {
    size_t N = Total - Off < BATCH_OP ? Total - Off : BATCH_OP;
    if (Write)
      fillPattern(Buf, N, Off, FILE_SALT);
    ssize_t Got = Write ? pwrite(B.Fd, Buf, N, Off) : pread(B.Fd, Buf, N, Off);
    if (Got != (ssize_t)N)
      return 0;
    Good &= Write || matchesPattern(Buf, N, Off, FILE_SALT);
  }
  return Good;
}

/// Opens FILE, writes the pattern unless it is there already, and reads it
/// once so that it is in the page cache.
static void prepareFile(const char *Path) {
  size_t Total = B.Size * B.NumDevs;
  struct stat St;
  char *Buf = malloc(BATCH_OP);
  B.Fd = open(Path, O_RDWR | O_CREAT, 0644);
  if (!Buf || B.Fd < 0 || fstat(B.Fd, &St))
    fail(Path);
  int Reused = (size_t)St.st_size >= Total && fileChunks(Buf, Total, 0);
  if (!Reused && !fileChunks(Buf, Total, 1))
    fail("writing the file");
  double T0 = now();
  if (!fileChunks(Buf, Total, 0))
    fail("reading the file back (short or not the pattern)");
  printf("file %s: %zu MiB %s; pread once from the page cache: %.2f GB/s\n",
         Path, Total >> 20, Reused ? "reused" : "written",
         Total / (now() - T0) / 1e9);
  free(Buf);
}

static void clearDevice(int D) {
  uint64_t *P = (uint64_t *)B.Dev[D];
  size_t N = B.Size / 8;
#pragma omp target teams distribute parallel for device(D) is_device_ptr(P)
  for (size_t I = 0; I < N; ++I)
    P[I] = 0;
}

/// Copies SAMPLES places of SAMPLE bytes of device D back (first and last
/// included) and compares them with the pattern from Base.
static int verifyDevice(int D, uint64_t Base, unsigned Salt) {
  for (int K = 0; K < SAMPLES; ++K) {
    size_t Off = K == SAMPLES - 1
                     ? B.Size - SAMPLE
                     : ((B.Size - SAMPLE) / (SAMPLES - 1) * K) & ~(size_t)7;
    if (omp_target_memcpy(B.Back, B.Dev[D], SAMPLE, 0, Off, B.Host, D))
      fail("copying a sample back");
    if (!matchesPattern(B.Back, SAMPLE, Base + Off, Salt)) {
      fprintf(stderr, "multi-device-bench: device %d differs at %zu\n", D, Off);
      return 0;
    }
  }
  return 1;
}

/// One batch reading every device's slice; Secs[] gets its wall time.
static double runBatch(const struct RunTy *R, double *Secs) {
  size_t PerDev = (B.Size + BATCH_OP - 1) / BATCH_OP, N = 0;
  ompx_io_op_t *Ops = calloc(PerDev * R->Count, sizeof(*Ops));
  if (!Ops)
    fail("calloc");
  for (int D = R->First; D < R->First + R->Count; ++D)
    for (size_t Off = 0; Off < B.Size; Off += BATCH_OP) {
      ompx_io_op_t *Op = &Ops[N++];
      Op->opcode = OMPX_IO_OP_READ;
      Op->fd = B.Fd;
      Op->device_buf = B.Dev[D] + Off;
      Op->count = B.Size - Off < BATCH_OP ? B.Size - Off : BATCH_OP;
      Op->offset = (off_t)(D * B.Size + Off);
      Op->device_num = D;
    }
  ompx_io_batch_t Batch;
  double T0 = now();
  if (ompx_io_batch_submit(Ops, N, &Batch))
    fail("ompx_io_batch_submit");
  ssize_t Failed = ompx_io_batch_wait(Batch);
  double Wall = now() - T0;
  if (Failed < 0)
    fail("ompx_io_batch_wait");
  for (size_t I = 0; I < N; ++I)
    if (Ops[I].result != (ssize_t)Ops[I].count) {
      fprintf(stderr,
              "multi-device-bench: batch op %zu (device %d, offset "
              "%lld): result %zd of %zu, %s\n",
              I, Ops[I].device_num, (long long)Ops[I].offset, Ops[I].result,
              Ops[I].count, strerror(Ops[I].error));
      Wall = -1;
    }
  for (int T = 0; T < R->Count; ++T)
    Secs[T] = Wall;
  free(Ops);
  return Wall;
}

/// One round: one host thread per device, released together. Returns the
/// wall time (first start to last end), -1 when a call failed; Secs[] gets
/// each device's own time.
static double runOnce(const struct RunTy *R, double *Secs) {
  if (R->Kind == Batch)
    return runBatch(R, Secs);
  double Start[MAX_DEVICES], End[MAX_DEVICES];
  int Failed = 0;
#pragma omp parallel num_threads(R->Count) reduction(| : Failed)
  {
    int T = omp_get_thread_num(), D = R->First + T;
    if (T == 0 && omp_get_num_threads() != R->Count) {
      fprintf(stderr, "multi-device-bench: %d host threads for %d devices\n",
              omp_get_num_threads(), R->Count);
      Failed = 1;
    }
#pragma omp barrier
    Start[T] = now();
    if (R->Kind == Copy)
      Failed |=
          omp_target_memcpy(B.Dev[D], R->Src, B.Size, 0, 0, D, B.Host) != 0;
    else if (R->Kind == FileRead)
      Failed |= ompx_target_pread(B.Fd, B.Dev[D], B.Size, (off_t)(D * B.Size),
                                  D) != (ssize_t)B.Size;
    else
      Failed |= omp_target_memcpy(B.Dev[D], B.Dev[0], B.Size, 0, 0, D, 0) != 0;
    End[T] = now();
    if (Failed)
      fprintf(stderr, "multi-device-bench: device %d: %s (%s)\n", D,
              strerror(errno), ompx_io_last_error());
  }
  if (Failed)
    return -1;
  double First = Start[0], Last = End[0];
  for (int T = 0; T < R->Count; ++T) {
    Secs[T] = End[T] - Start[T];
    First = Start[T] < First ? Start[T] : First;
    Last = End[T] > Last ? End[T] : Last;
  }
  return Last - First;
}

static void snapshot(uint64_t Bytes[][OMPX_COPY_NUM_PATHS],
                     uint64_t Read[][OMPX_IO_NUM_PATHS]) {
  uint64_t Copies[OMPX_COPY_NUM_PATHS];
  ompx_io_stats_t St;
  for (int D = 0; D < B.NumDevs; ++D) {
    if (ompx_target_copy_counters(D, Bytes[D], Copies) ||
        ompx_io_get_stats(D, &St))
      fail("counters");
    memcpy(Read[D], St.bytes_read, sizeof(St.bytes_read));
  }
}

/// Which copy and file paths the devices of R took in the rounds: the
/// counters' growth from Bytes and Read to NowBytes and NowRead.
static void printPaths(const struct RunTy *R,
                       uint64_t Bytes[][OMPX_COPY_NUM_PATHS],
                       uint64_t Read[][OMPX_IO_NUM_PATHS],
                       uint64_t NowBytes[][OMPX_COPY_NUM_PATHS],
                       uint64_t NowRead[][OMPX_IO_NUM_PATHS]) {
  printf("    paths (MiB, %d rounds):", ROUNDS);
  for (int D = 0; D < B.NumDevs; ++D) {
    if ((D < R->First || D >= R->First + R->Count) &&
        !(R->Kind == Peer && D == 0))
      continue;
    printf(" dev %d", D);
    int Any = 0;
    for (int P = 0; P < OMPX_COPY_NUM_PATHS; ++P)
      if (NowBytes[D][P] != Bytes[D][P] && ++Any)
        printf(" %s %llu", ompx_copy_path_name(P),
               (unsigned long long)(NowBytes[D][P] - Bytes[D][P]) >> 20);
    for (int P = 0; P < OMPX_IO_NUM_PATHS; ++P)
      if (NowRead[D][P] != Read[D][P] && ++Any)
        printf(" file-%s %llu", ompx_io_path_name(P),
               (unsigned long long)(NowRead[D][P] - Read[D][P]) >> 20);
    printf("%s%s", Any ? "" : " none",
           D + 1 < R->First + R->Count ? ";" : "\n");
  }
}

/// Clears the devices of R, runs ROUNDS rounds, checks the data, prints the
/// best round and records it. Single: the best single-device figure to
/// compare an aggregate with (0: none). Returns GB/s.
static double measure(const char *Name, struct RunTy R, double Single) {
  static uint64_t Bytes[MAX_DEVICES][OMPX_COPY_NUM_PATHS],
      Read[MAX_DEVICES][OMPX_IO_NUM_PATHS],
      NowBytes[MAX_DEVICES][OMPX_COPY_NUM_PATHS],
      NowRead[MAX_DEVICES][OMPX_IO_NUM_PATHS];
  double Best = -1, BestSecs[MAX_DEVICES], Secs[MAX_DEVICES];
  for (int D = R.First; D < R.First + R.Count; ++D)
    clearDevice(D);
  snapshot(Bytes, Read);
  for (int Round = 0; Round < ROUNDS; ++Round) {
    double Wall = runOnce(&R, Secs);
    if (Wall < 0) {
      fprintf(stderr, "multi-device-bench: %s failed\n", Name);
      exit(1);
    }
    if (Best < 0 || Wall < Best) {
      Best = Wall;
      memcpy(BestSecs, Secs, sizeof(Secs));
    }
  }
  snapshot(NowBytes, NowRead);
  int Ok = 1;
  for (int D = R.First; D < R.First + R.Count; ++D)
    Ok &= verifyDevice(
        D, R.Kind == FileRead || R.Kind == Batch ? D * B.Size : 0, R.Salt);
  B.Bad |= !Ok;
  double Rate = (double)R.Count * B.Size / Best / 1e9;
  double Fastest = 0, Slowest = 0;
  printf("  %-16s %8.2f GB/s", Name, Rate);
  if (R.Count > 1 && R.Kind != Batch) {
    for (int T = 0; T < R.Count; ++T) {
      double Own = B.Size / BestSecs[T] / 1e9;
      printf("%sdev %d %.2f", T ? ", " : " (", R.First + T, Own);
      Fastest = T == 0 || Own > Fastest ? Own : Fastest;
      Slowest = T == 0 || Own < Slowest ? Own : Slowest;
    }
    printf("; spread %.2f)", Fastest / Slowest);
  }
  double Ratio = Single > 0 ? Rate / (R.Count * Single) : 0;
  if (Single > 0)
    printf(", %.2fx the best single device, %.2f of %d x it", Rate / Single,
           Ratio, R.Count);
  printf(", data %s\n", Ok ? "verified" : "WRONG");
  printPaths(&R, Bytes, Read, NowBytes, NowRead);
  snprintf(Rows[NumRows].Name, sizeof(Rows[NumRows].Name), "%s", Name);
  Rows[NumRows].Rate = Rate;
  Rows[NumRows].Spread = Slowest > 0 ? Fastest / Slowest : 0;
  Rows[NumRows++].Ratio = Ratio;
  return Rate;
}

static double max2(double A, double C) { return A > C ? A : C; }

/// a. One region locked once via device 0, copied to each device.
static void lockedCopies(const char *All) {
  char *Src = malloc(B.Size);
  if (!Src)
    fail("malloc");
  fillPattern(Src, B.Size, 0, LOCKED_SALT);
  // libomptarget 18's llvm_omp_target_lock_mem returns NULL without
  // asking any plugin: ours locks the same way through libompx_io.
  void *Locked = llvm_omp_target_lock_mem(Src, B.Size, 0);
  int OwnLock = !Locked;
  if (OwnLock)
    Locked = ompx_target_lock_mem(Src, B.Size, 0);
  printf("a. host -> device from one region locked once via device 0 (%s):",
         !Locked ? "lock FAILED, measured pageable"
         : OwnLock ? "locked through ompx_target_lock_mem"
                   : "locked");
  for (int D = 0; D < B.NumDevs; ++D) {
    ompx_lock_region_t Region;
    int Seen = ompx_target_lock_info(Src, D, &Region);
    if (Seen < 0)
      fail("ompx_target_lock_info (is the device served by offload-io?)");
    printf("%s dev %d %s", D ? "," : "", D,
           Seen ? "sees it locked" : "does not");
  }
  printf("\n");
  double D0 =
      measure("locked-dev0", (struct RunTy){Copy, Src, LOCKED_SALT, 0, 1}, 0);
  double D1 =
      measure("locked-dev1", (struct RunTy){Copy, Src, LOCKED_SALT, 1, 1}, 0);
  measure(All, (struct RunTy){Copy, Src, LOCKED_SALT, 0, B.NumDevs},
          max2(D0, D1));
  if (Locked && OwnLock)
    ompx_target_unlock_mem(Src, 0);
  else if (Locked)
    llvm_omp_target_unlock_mem(Src, 0);
  free(Src);
}

/// GB/s of Threads threads memcpy'ing NumDevs x Size bytes of Src (each
/// device's copy reads the same source) into fresh pageable memory; best of
/// ROUNDS, the destination touched first.
static double hostMemcpyRate(const char *Src, unsigned Threads) {
  size_t Total = B.NumDevs * B.Size, Piece = (Total + Threads - 1) / Threads;
  char *Dst = malloc(Total);
  if (!Dst)
    fail("malloc (host memcpy bound)");
  memset(Dst, 0, Total);
  double Best = -1;
  for (int Round = 0; Round < ROUNDS; ++Round) {
    double T0 = now();
#pragma omp parallel for num_threads(Threads) schedule(static, 1)
    for (unsigned T = 0; T < Threads; ++T) {
      size_t Pos = T * Piece, End = Pos + Piece > Total ? Total : Pos + Piece;
      while (Pos < End) {
        size_t Off = Pos % B.Size;
        size_t Len = End - Pos < B.Size - Off ? End - Pos : B.Size - Off;
        memcpy(Dst + Pos, Src + Off, Len);
        Pos += Len;
      }
    }
    double Wall = now() - T0;
    Best = Best < 0 || Wall < Best ? Wall : Best;
  }
  free(Dst);
  return Total / Best / 1e9;
}

/// b. The same from pageable memory.
static void pageableCopies(const char *All) {
  char *Src = malloc(B.Size);
  if (!Src)
    fail("malloc");
  fillPattern(Src, B.Size, 0, PAGEABLE_SALT);
  printf("b. host -> device from pageable malloc memory:\n");
  double D0 = measure("pageable-dev0",
                      (struct RunTy){Copy, Src, PAGEABLE_SALT, 0, 1}, 0);
  double Rate =
      measure(All, (struct RunTy){Copy, Src, PAGEABLE_SALT, 0, B.NumDevs}, D0);
  // The host's own bound: the same bytes memcpy'd between pageable
  // buffers by as many threads as the copies had.
  unsigned Threads = Copiers * (unsigned)B.NumDevs;
  if (Threads > Budget.cpus - 1)
    Threads = Budget.cpus - 1;
  Threads += (unsigned)B.NumDevs;
  double Host = hostMemcpyRate(Src, Threads);
  double Bound = B.NumDevs * D0 < Host ? B.NumDevs * D0 : Host;
  printf("  host memcpy, %u threads: %.2f GB/s; bound min(%d x %.2f, %.2f) = "
         "%.2f GB/s (%s); aggregate %.2f of it\n",
         Threads, Host, B.NumDevs, D0, Host, Bound,
         B.NumDevs * D0 < Host ? "the devices" : "the host's memcpy",
         Rate / Bound);
  snprintf(Rows[NumRows].Name, sizeof(Rows[NumRows].Name), "pageable/bound");
  Rows[NumRows].Rate = Bound;
  Rows[NumRows].Spread = 0;
  Rows[NumRows++].Ratio = Rate / Bound;
  free(Src);
}

int main(int Argc, char **Argv) {
  if (Argc < 3 || atol(Argv[2]) < 1) {
    fprintf(stderr, "usage: %s FILE SIZE_MIB [DEVICES] [THREADS]\n", Argv[0]);
    return 2;
  }
  // Line by line into a pipe (tee), so that a timeout keeps what was done.
  setvbuf(stdout, NULL, _IOLBF, 0);
  // Before any offload call: each device's file engine reads it at its start.
  if (Argc > 4)
    setenv("OMPX_IO_THREADS", Argv[4], 1);
  B.Size = (size_t)atol(Argv[2]) << 20;
  int Avail = omp_get_num_devices();
  B.NumDevs = Argc > 3 ? atoi(Argv[3]) : Avail;
  if (B.NumDevs < 2 || B.NumDevs > Avail || B.NumDevs > MAX_DEVICES) {
    fprintf(stderr,
            "multi-device-bench: needs 2 to %d devices; %d asked, %d "
            "available: nothing measured\n",
            MAX_DEVICES, B.NumDevs, Avail);
    return 2;
  }
  B.Host = omp_get_initial_device();
  if (ompx_io_get_process_budget(&Budget))
    fail("no offload-io plugin loaded (LD_LIBRARY_PATH: build/lib first?)");
  printf("multi-device-bench: %zu MiB per device, devices 0-%d of %d; "
         "offload-io plugin, libompx_io %s; engine io_threads %u (%s)\n",
         B.Size >> 20, B.NumDevs - 1, Avail, ompx_io_version(NULL, NULL, NULL),
         Budget.io_threads, Budget.io_threads_origin);
  printf("copy helpers %u per device in use (%s)\n", Budget.copy_threads,
         Budget.copy_threads_origin);
  Copiers = Budget.copy_threads;
  for (int D = 0; D < B.NumDevs; ++D)
    if (!(B.Dev[D] = omp_target_alloc(B.Size, D)))
      fail("omp_target_alloc");
  char All[32];

  snprintf(All, sizeof(All), "locked-all%d", B.NumDevs);
  lockedCopies(All);
  snprintf(All, sizeof(All), "pageable-all%d", B.NumDevs);
  pageableCopies(All);

  prepareFile(Argv[1]);
  printf("c. page-cached file -> device, ompx_target_pread:\n");
  snprintf(All, sizeof(All), "file-all%d", B.NumDevs);
  double D0 =
      measure("file-dev0", (struct RunTy){FileRead, NULL, FILE_SALT, 0, 1}, 0);
  measure(All, (struct RunTy){FileRead, NULL, FILE_SALT, 0, B.NumDevs}, D0);

  printf("d. one ompx_io batch of %zu MiB reads:\n", BATCH_OP >> 20);
  snprintf(All, sizeof(All), "batch-all%d", B.NumDevs);
  D0 = measure("batch-dev0", (struct RunTy){Batch, NULL, FILE_SALT, 0, 1}, 0);
  measure(All, (struct RunTy){Batch, NULL, FILE_SALT, 0, B.NumDevs}, D0);

  // Device 0 holds its file slice (pattern from offset 0) after d.
  printf("e. device 0 -> device 1, omp_target_memcpy:\n");
  measure("peer-0to1", (struct RunTy){Peer, NULL, FILE_SALT, 1, 1}, 0);

  printf("summary (GB/s; of N x one: aggregate over N x the best single "
         "device, target 0.90; pageable/bound: the bound and the aggregate's "
         "share of it, target 0.90; spread: fastest device over slowest, "
         "target <= 1.20)\n");
  printf("%-16s %8s  %10s  %6s\n", "", "GB/s", "of N x one", "spread");
  for (int I = 0; I < NumRows; ++I) {
    printf("%-16s %8.2f", Rows[I].Name, Rows[I].Rate);
    if (Rows[I].Ratio > 0)
      printf("  %10.2f", Rows[I].Ratio);
    else
      printf("  %10s", "-");
    if (Rows[I].Spread > 0)
      printf("  %6.2f\n", Rows[I].Spread);
    else
      printf("  %6s\n", "-");
  }
  for (int D = 0; D < B.NumDevs; ++D)
    omp_target_free(B.Dev[D], D);
  close(B.Fd);
  printf("data: %s\n", B.Bad ? "WRONG" : "verified on every device");
  return B.Bad ? 1 : 0;
}

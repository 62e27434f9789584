// SPDX-License-Identifier: Apache-2.0
//
// The cost of submitting one ompx_io batch of many operations whose ranges
// cover each other, per operation: the checks across operations
// (libompx_io), the plugin's checks and gathering, then the wait. Patterns,
// each of --ops operations of --bytes bytes on device --device:
//   distinct              the baseline, run first: reads of distinct file
//                         ranges, apart, into distinct buffers (nothing
//                         overlaps, nothing is gathered);
//   read-one-range        reads of one file range into distinct buffers
//                         (all valid: reads never conflict);
//   write-one-source      writes from one buffer to distinct file ranges,
//                         apart so that none are gathered (all valid);
//   read-one-destination  reads of distinct ranges into one buffer (all
//                         refused);
//   write-one-range       writes from distinct buffers to one file range
//                         (all refused);
//   append-and-reads      O_APPEND writes and reads of distinct ranges, by
//                         turns (all refused: an append covers the file);
//   random-mix            reads and writes at random buffers and offsets of
//                         a window as large as the batch's data (some
//                         refused).
// Prints a table (each pattern's submit time also as a ratio to the
// baseline's), one "BATCHPLAN key=value" line per pattern and a RESULT
// line of microseconds per operation for submit (wall clock; the submitting
// thread's CPU time beside it, since a shared machine's wall clock counts
// waits for a core); asserts nothing but that each pattern fails exactly
// the operations it must.
//
// Usage: batch-plan-bench [--ops N] [--bytes B] [--device D] [--repeat R]
//                         [--pattern NAME]... [--file PATH]
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-util.h"
#include "ompx_io.h"

enum PatternTy {
  Distinct,
  ReadOneRange,
  WriteOneSource,
  ReadOneDestination,
  WriteOneRange,
  AppendAndReads,
  RandomMix,
  NumPatterns
};

static const char *const PatternNames[NumPatterns] = {
    "distinct",         "read-one-range",
    "write-one-source", "read-one-destination",
    "write-one-range",  "append-and-reads",
    "random-mix"};

struct OptionsTy {
  size_t Ops, Bytes;
  int Device, Repeat;
  const char *Path;
  int Selected[NumPatterns];
};

struct FilesTy {
  int Fd;       ///< Read and write.
  int AppendFd; ///< The same file, O_APPEND.
};

static void die(const char *What) { benchDie("batch-plan-bench", What); }

static size_t parseCount(const char *Text) {
  char *End;
  unsigned long long V = strtoull(Text, &End, 10);
  if (*End || !V) {
    fprintf(stderr, "batch-plan-bench: not a positive count: '%s'\n", Text);
    exit(2);
  }
  return (size_t)V;
}

static void parse(int Argc, char **Argv, struct OptionsTy *O) {
  *O = (struct OptionsTy){1000000, 1, 0, 1, NULL, {0}};
  int Any = 0;
  for (int I = 1; I < Argc; ++I) {
    const char *A = Argv[I];
    const char *V = I + 1 < Argc ? Argv[I + 1] : NULL;
    if (!strcmp(A, "--ops") && V)
      O->Ops = parseCount(V), ++I;
    else if (!strcmp(A, "--bytes") && V)
      O->Bytes = parseCount(V), ++I;
    else if (!strcmp(A, "--device") && V)
      O->Device = atoi(V), ++I;
    else if (!strcmp(A, "--repeat") && V)
      O->Repeat = atoi(V) > 0 ? atoi(V) : 1, ++I;
    else if (!strcmp(A, "--file") && V)
      O->Path = V, ++I;
    else if (!strcmp(A, "--pattern") && V) {
      int P = 0;
      while (P < NumPatterns && strcmp(PatternNames[P], V))
        ++P;
      if (P == NumPatterns) {
        fprintf(stderr, "batch-plan-bench: unknown pattern '%s'\n", V);
        exit(2);
      }
      O->Selected[P] = Any = 1;
      ++I;
    } else {
      fprintf(stderr,
              "usage: batch-plan-bench [--ops N] [--bytes B] [--device D] "
              "[--repeat R] [--pattern NAME]... [--file PATH]\n");
      exit(2);
    }
  }
  if (O->Ops < 2) {
    fprintf(stderr, "batch-plan-bench: --ops must be at least 2\n");
    exit(2);
  }
  for (int P = 0; P < NumPatterns && !Any; ++P)
    O->Selected[P] = 1;
  O->Selected[Distinct] = 1;
}

/// Fill \p Ops with pattern \p P over \p Dev; the number of operations that
/// must fail, or -1 when that depends on the draw.
static long long fill(enum PatternTy P, const struct OptionsTy *O,
                      const struct FilesTy *F, char *Dev, ompx_io_op_t *Ops) {
  size_t N = O->Ops, B = O->Bytes;
  for (size_t I = 0; I < N; ++I) {
    ompx_io_op_t *Op = &Ops[I];
    switch (P) {
    case Distinct:
      *Op = (ompx_io_op_t){OMPX_IO_OP_READ,    F->Fd,     Dev + I * B, B,
                           (off_t)(2 * I * B), O->Device, 0,           0};
      break;
    case ReadOneRange:
      *Op = (ompx_io_op_t){
          OMPX_IO_OP_READ, F->Fd, Dev + I * B, B, 0, O->Device, 0, 0};
      break;
    case WriteOneSource:
      *Op = (ompx_io_op_t){OMPX_IO_OP_WRITE,   F->Fd,     Dev, B,
                           (off_t)(2 * I * B), O->Device, 0,   0};
      break;
    case ReadOneDestination:
      *Op = (ompx_io_op_t){OMPX_IO_OP_READ, F->Fd,     Dev, B,
                           (off_t)(I * B),  O->Device, 0,   0};
      break;
    case WriteOneRange:
      *Op = (ompx_io_op_t){
          OMPX_IO_OP_WRITE, F->Fd, Dev + I * B, B, 0, O->Device, 0, 0};
      break;
    case AppendAndReads:
      *Op = (ompx_io_op_t){I % 2 ? OMPX_IO_OP_READ : OMPX_IO_OP_WRITE,
                           I % 2 ? F->Fd : F->AppendFd,
                           Dev + I * B,
                           B,
                           (off_t)(I * B),
                           O->Device,
                           0,
                           0};
      break;
    case RandomMix: {
      uint64_t R = benchMix(I + 1);
      *Op = (ompx_io_op_t){(int)(R & 1),
                           F->Fd,
                           Dev + (R >> 1) % N * B,
                           B,
                           (off_t)((R >> 32) % N * B),
                           O->Device,
                           0,
                           0};
      break;
    }
    default:
      break;
    }
  }
  return P == Distinct || P == ReadOneRange || P == WriteOneSource ? 0
         : P == RandomMix                                          ? -1
                          : (long long)N;
}

int main(int Argc, char **Argv) {
  struct OptionsTy O;
  parse(Argc, Argv, &O);
  if (O.Device == omp_get_initial_device() || O.Device < 0 ||
      O.Device >= omp_get_num_devices()) {
    fprintf(stderr,
            "batch-plan-bench: --device %d is not an offload device "
            "(%d present)\n",
            O.Device, omp_get_num_devices());
    return 2;
  }
  char Path[4096];
  if (O.Path)
    snprintf(Path, sizeof(Path), "%s", O.Path);
  else
    snprintf(Path, sizeof(Path), "/tmp/batch-plan-bench-%d", (int)getpid());
  struct FilesTy F;
  F.Fd = open(Path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (F.Fd < 0)
    die(Path);
  F.AppendFd = open(Path, O_WRONLY | O_APPEND);
  if (F.AppendFd < 0)
    die(Path);
  // Twice the batch's data: write-one-source leaves a gap after each range.
  if (ftruncate(F.Fd, (off_t)(2 * O.Ops * O.Bytes)) != 0)
    die("ftruncate");
  char *Dev = omp_target_alloc(O.Ops * O.Bytes, O.Device);
  ompx_io_op_t *Ops = malloc(O.Ops * sizeof(*Ops));
  if (!Dev || !Ops)
    die("allocating the buffers");

  // One untimed batch of the baseline first: the plugin's start and the
  // heap's first growth to a batch of this size are not planning.
  ompx_io_batch_t Batch;
  fill(Distinct, &O, &F, Dev, Ops);
  if (ompx_io_batch_submit(Ops, O.Ops, &Batch) != 0 ||
      ompx_io_batch_wait(Batch) != 0)
    die(ompx_io_last_error());
  benchPrintPlugin(BENCH_PLUGIN_PREFIX);
  printf("batch-plan-bench: %zu operations of %zu bytes on device %d, best "
         "of %d\n\n",
         O.Ops, O.Bytes, O.Device, O.Repeat);
  double SubmitS[NumPatterns] = {0}, CpuS[NumPatterns] = {0};
  double WaitS[NumPatterns] = {0};
  ssize_t Failed[NumPatterns] = {0};
  int Broken = 0;
  for (int P = 0; P < NumPatterns; ++P) {
    if (!O.Selected[P])
      continue;
    for (int R = 0; R < O.Repeat; ++R) {
      long long Want = fill((enum PatternTy)P, &O, &F, Dev, Ops);
      double C0 = benchThreadCpuNow(), T0 = benchNow();
      if (ompx_io_batch_submit(Ops, O.Ops, &Batch) != 0)
        die(ompx_io_last_error());
      double T1 = benchNow(), C1 = benchThreadCpuNow();
      Failed[P] = ompx_io_batch_wait(Batch);
      double T2 = benchNow();
      if (Failed[P] < 0)
        die(ompx_io_last_error());
      if (Want >= 0 && Failed[P] != Want) {
        fprintf(stderr,
                "batch-plan-bench: %s: %zd operations failed, %lld "
                "expected: %s\n",
                PatternNames[P], Failed[P], Want,
                Failed[P] ? ompx_io_last_error() : "");
        Broken = 1;
      }
      if (!R || T1 - T0 < SubmitS[P])
        SubmitS[P] = T1 - T0;
      if (!R || C1 - C0 < CpuS[P])
        CpuS[P] = C1 - C0;
      if (!R || T2 - T1 < WaitS[P])
        WaitS[P] = T2 - T1;
    }
  }

  double PerOp = 1e6 / (double)O.Ops;
  printf("%-21s %8s %13s %12s %10s %11s\n", "pattern", "failed", "submit us/op",
         "(cpu us/op)", "x distinct", "wait us/op");
  for (int P = 0; P < NumPatterns; ++P)
    if (O.Selected[P])
      printf("%-21s %8zd %13.3f %12.3f %10.2f %11.3f\n", PatternNames[P],
             Failed[P], SubmitS[P] * PerOp, CpuS[P] * PerOp,
             SubmitS[P] / SubmitS[Distinct], WaitS[P] * PerOp);
  printf("\n");
  for (int P = 0; P < NumPatterns; ++P)
    if (O.Selected[P])
      printf("BATCHPLAN pattern=%s ops=%zu bytes=%zu failed=%zd submit_s=%.6f "
             "submit_cpu_s=%.6f wait_s=%.6f submit_us_per_op=%.4f "
             "submit_cpu_us_per_op=%.4f wait_us_per_op=%.4f ratio=%.4f\n",
             PatternNames[P], O.Ops, O.Bytes, Failed[P], SubmitS[P], CpuS[P],
             WaitS[P], SubmitS[P] * PerOp, CpuS[P] * PerOp, WaitS[P] * PerOp,
             SubmitS[P] / SubmitS[Distinct]);
  printf("RESULT");
  for (int P = 0; P < NumPatterns; ++P)
    if (O.Selected[P])
      printf(" %s=%.4f", PatternNames[P], SubmitS[P] * PerOp);
  printf(" correct=%s\n", Broken ? "no" : "yes");

  omp_target_free(Dev, O.Device);
  free(Ops);
  close(F.AppendFd);
  close(F.Fd);
  if (unlink(Path) != 0)
    die("unlink");
  return Broken;
}

// SPDX-License-Identifier: Apache-2.0
//
// ompx-io bench: its help and its command line.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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
      "speeds,\n"
      "  unless --direct.\n"
      "\n"
      "Options:\n"
      "  --device N         OpenMP device (default 0)\n"
      "  --file PATH        test file to read; reused if large enough, else\n"
      "                     created with the largest size (and removed unless\n"
      "                     --keep-file)\n"
      "  --dir DIR          without --file: where to create a test file of "
      "this\n"
      "                     run's own (a unique name, removed afterwards; "
      "default\n"
      "                     $TMPDIR, else " DEFAULT_BENCH_DIR ")\n"
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
      "  --plot FILE        also render them as a PNG (tools/bench/plot-io.sh"
      ",\n"
      "                     needs gnuplot); nothing is plotted without it\n"
      "  --naive / --no-naive  force the pread + omp_target_memcpy baseline "
      "on/off\n"
      "  --baseline-buffer aligned|malloc\n"
      "                     host buffer of the baselines (default aligned: "
      "page-\n"
      "                     aligned; malloc's 16-byte page offset makes the\n"
      "                     kernel's page-cache copy about 2x slower on x86)\n"
      "  --direct           disk mode: the file opened with O_DIRECT by the\n"
      "                     transfers and the baselines alike, so figures are\n"
      "                     the storage's, beside its own O_DIRECT pread rate\n"
      "                     (sizes must be multiples of 4 KiB; page-aligned\n"
      "                     baseline buffers)\n"
      "  --keep-file        keep a test file that this run created\n"
      "  -h, --help         this help\n"
      "\n"
      "Devices: ompx-io is built for the offload targets in the CMake option\n"
      "OFFLOADIO_TOOL_TARGETS (x86_64 always; add nvptx64-nvidia-cuda and/or\n"
      "amdgcn-amd-amdhsa, e.g. -DOFFLOADIO_TOOL_TARGETS=nvptx64-nvidia-cuda)"
      ";\n"
      "a device of a target it lacks cannot run its kernels.\n");
}

static int cmpU64(const void *A, const void *B) {
  uint64_t X = *(const uint64_t *)A, Y = *(const uint64_t *)B;
  return X < Y ? -1 : X > Y;
}

void parseBench(int Argc, char **Argv, BenchOpts *O) {
  memset(O, 0, sizeof(*O));
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
                     !strcmp(Name, "--dir") || !strcmp(Name, "--plot") ||
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
    } else if (!strcmp(Name, "--dir")) {
      if (!*Val)
        usageError("bench: --dir: empty path");
      O->Dir = Val;
    } else if (!strcmp(Name, "--plot")) {
      if (!*Val)
        usageError("bench: --plot: empty path");
      O->Plot = Val;
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
      if (O->MallocBaseline && O->Direct)
        usageError("bench: --direct takes page-aligned baseline buffers, "
                   "not --baseline-buffer malloc");
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
    } else if (!strcmp(Name, "--direct")) {
      O->Direct = 1;
      if (O->MallocBaseline)
        usageError("bench: --direct takes page-aligned baseline buffers, "
                   "not --baseline-buffer malloc");
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
    if (O->Direct && O->Sizes[I] % 4096)
      usageError("bench: --sizes: '%s' is no multiple of 4 KiB, which "
                 "--direct (O_DIRECT) needs",
                 Items[I]);
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
  if (O->File && O->Dir)
    usageError("bench: --dir is for the run's own file; --file names one");
  if (!O->Dir) {
    const char *Tmp = getenv("TMPDIR");
    O->Dir = Tmp && *Tmp ? Tmp : DEFAULT_BENCH_DIR;
  }
}


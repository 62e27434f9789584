// SPDX-License-Identifier: Apache-2.0
//
// ompx-io bench: the matrix of jobs, its rounds, and the report.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench.h"
#include "ompx_io.h"

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int cmdBench(int Argc, char **Argv) {
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

  // --plot renders from the CSV: --csv's, or one of its own, removed after.
  char PlotCsv[PATH_MAX] = "";
  FILE *Csv = NULL;
  if (O.Csv && !(Csv = fopen(O.Csv, "w")))
    fatal("cannot write --csv %s: %s", O.Csv, strerror(errno));
  if (O.Plot && !O.Csv) {
    snprintf(PlotCsv, sizeof(PlotCsv), "%s.csv.XXXXXX", O.Plot);
    int Fd = mkstemp(PlotCsv);
    if (Fd < 0 || !(Csv = fdopen(Fd, "w")))
      fatal("--plot: cannot create %s: %s", PlotCsv, strerror(errno));
  }

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
  int Created = prepareFile(&O, MaxSize);
  char WriteFile[PATH_MAX] = "";
  if (O.Write) {
    // A name of its own for each run, beside the file it reads.
    snprintf(WriteFile, sizeof(WriteFile), "%s.write.XXXXXX", O.File);
    int Fd = mkstemp(WriteFile);
    if (Fd < 0)
      fatal("cannot create %s: %s", WriteFile, strerror(errno));
    close(Fd);
  }
  double ColdRate = 0;
  // O_DIRECT bypasses the page cache: nothing to warm.
  double Cached = O.Direct ? 0 : warmFile(O.File, MaxSize, &ColdRate);

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
  if (O.Direct) {
    printf("\nNOTE: disk mode (--direct): every transfer and baseline opens "
           "the file with O_DIRECT, so figures are the storage's; the "
           "baselines are its own O_DIRECT rate%s.\n",
           O.Write ? "; writes reach the device without fsync" : "");
  } else {
    if (Cached >= 0)
      printf(", %.0f%% in the page cache after warming", Cached * 100);
    printf(" (first read %.2f GB/s)\n", ColdRate);
    printf("NOTE: numbers are PAGE-CACHED: reads are served from memory, not "
           "from the storage device%s.\n",
           O.Write ? "; writes go to the page cache without fsync" : "");
  }
  char Chunk[256], Ring[256];
  describeSetting("OMPX_IO_CHUNK_SIZE", Chunk, sizeof(Chunk));
  describeSetting("OMPX_IO_RING_DEPTH", Ring, sizeof(Ring));
  printf("engine: OMPX_IO_CHUNK_SIZE=%s, OMPX_IO_RING_DEPTH=%s; "
         "OMPX_IO_THREADS and OMPX_IO_PATH set per row\n",
         Chunk, Ring);
  printf("baselines: plain %s%s into a %s host buffer with 1 and 2 threads "
         "(halves)%s\n",
         O.Write ? "pread/pwrite" : "pread", O.Direct ? " (O_DIRECT)" : "",
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
              !O.Direct && Cached >= 0.99, J->Runs);
    }
    const char *CsvName = O.Csv ? O.Csv : PlotCsv;
    if (fclose(Csv))
      fatal("writing %s: %s", CsvName, strerror(errno));
    if (O.Csv)
      fprintf(stderr, "%s: wrote %s\n", Prog, O.Csv);
    if (O.Plot && !Interrupted)
      renderPlot(CsvName, O.Plot);
    if (*PlotCsv)
      unlink(PlotCsv);
  }
  free(Jobs);
  for (int I = 0; I < O.NumPaths; ++I)
    free(O.Paths[I]);
  if (Interrupted)
    fatal("interrupted");
  return Failures ? 1 : 0;
}

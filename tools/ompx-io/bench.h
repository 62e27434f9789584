// SPDX-License-Identifier: Apache-2.0
//
// ompx-io bench: the options and the jobs, shared by its files.
#ifndef OMPX_IO_BENCH_H
#define OMPX_IO_BENCH_H

#include "ompx-io.h"

#include <signal.h>

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
  const char *File;   ///< --file; null: a unique file in Dir.
  const char *Dir;    ///< Directory of the unique test file.
  const char *Plot;   ///< --plot: the PNG to render, or null.
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
  int Direct;         ///< --direct: the file opened O_DIRECT, disk speeds.
} BenchOpts;

/// Renders the results in CSV \p Csv as the PNG \p Png with plot-io.sh;
/// exits with an error if that fails.
void renderPlot(const char *Csv, const char *Png);

/// Parses bench's command line into \p O; exits on a usage error.
void parseBench(int Argc, char **Argv, BenchOpts *O);
/// Creates (or checks) the test file; returns 1 if this run created it.
int prepareFile(BenchOpts *O, uint64_t Size);
/// Reads the file once to pull it into the page cache; returns the cached
/// fraction of the first \p Size bytes (mincore), or -1.
double warmFile(const char *File, uint64_t Size, double *Rate);
/// Runs \p J in a child process of \p Exe; its results go into \p J.
void runJob(JobTy *J, const char *Exe, const BenchOpts *O, const char *File);
/// Shows progress on stderr: a bar on a terminal, else a line per job.
void progress(int Tty, int Done, int Total, const JobTy *J,
              const JobTy *Finished);
/// Set by SIGINT and SIGTERM.
extern volatile sig_atomic_t Interrupted;
/// The handler that sets Interrupted.
void onSignal(int Sig);

#endif // OMPX_IO_BENCH_H

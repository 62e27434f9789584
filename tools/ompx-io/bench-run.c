// SPDX-License-Identifier: Apache-2.0
//
// ompx-io bench: the test file, and running one job in a child process.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#ifndef OMPX_IO_PLOT_SCRIPT
#define OMPX_IO_PLOT_SCRIPT "plot-io.sh"
#endif

/// Opens the test file to fill: --file's, created if missing, or a new one
/// of a unique name in O->Dir (its name goes into O->File).
static int createFile(BenchOpts *O) {
  if (O->File) {
    int Fd = open(O->File, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (Fd < 0)
      fatal("cannot create %s: %s", O->File, strerror(errno));
    return Fd;
  }
  static char Name[PATH_MAX];
  if (snprintf(Name, sizeof(Name), "%s/" BENCH_FILE_TEMPLATE, O->Dir) >=
      (int)sizeof(Name))
    fatal("--dir %s: path too long", O->Dir);
  int Fd = mkstemp(Name);
  if (Fd < 0)
    fatal("cannot create a test file in %s (mkstemp %s): %s", O->Dir, Name,
          strerror(errno));
  O->File = Name;
  return Fd;
}

int prepareFile(BenchOpts *O, uint64_t Size) {
  struct stat St;
  if (O->File && stat(O->File, &St) == 0) {
    if (!S_ISREG(St.st_mode))
      fatal("--file %s is not a regular file", O->File);
    if ((uint64_t)St.st_size >= Size)
      return 0;
    fatal("--file %s has %lld bytes, less than the largest size (%llu); "
          "remove it or choose another file",
          O->File, (long long)St.st_size, (unsigned long long)Size);
  } else if (O->File && errno != ENOENT) {
    fatal("--file %s: %s", O->File, strerror(errno));
  }
  int Fd = createFile(O);
  const char *File = O->File;
  fprintf(stderr, "%s: creating %s (%llu bytes)\n", Prog, File,
          (unsigned long long)Size);
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
  return 1;
}

/// The plot script: an installed tool's (<bin>/../share/offload-io), else
/// the source tree's the tool was built from.
static const char *plotScript(char *Buf, size_t Len) {
  char Exe[4096];
  ssize_t N = readlink("/proc/self/exe", Exe, sizeof(Exe) - 1);
  if (N > 0) {
    Exe[N] = '\0';
    char *Slash = strrchr(Exe, '/');
    if (Slash) {
      *Slash = '\0';
      snprintf(Buf, Len, "%s/../share/offload-io/plot-io.sh", Exe);
      if (access(Buf, R_OK) == 0)
        return Buf;
    }
  }
  return OMPX_IO_PLOT_SCRIPT;
}

void renderPlot(const char *Csv, const char *Png) {
  char Buf[4200];
  const char *Script = plotScript(Buf, sizeof(Buf));
  pid_t Pid = fork();
  if (Pid < 0)
    fatal("--plot: fork: %s", strerror(errno));
  if (Pid == 0) {
    execlp("bash", "bash", Script, Csv, Png, (char *)NULL);
    fprintf(stderr, "%s: --plot: cannot run bash %s: %s\n", Prog, Script,
            strerror(errno));
    _exit(127);
  }
  int Status;
  while (waitpid(Pid, &Status, 0) < 0)
    if (errno != EINTR)
      fatal("--plot: waitpid: %s", strerror(errno));
  if (!WIFEXITED(Status) || WEXITSTATUS(Status))
    fatal("--plot %s: %s failed", Png, Script);
  fprintf(stderr, "%s: wrote %s\n", Prog, Png);
}

/// Reads the file once to pull it into the page cache; returns the cached
/// fraction of the first \p Size bytes (mincore), or -1.
double warmFile(const char *File, uint64_t Size, double *Rate) {
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

volatile sig_atomic_t Interrupted;
void onSignal(int Sig) {
  (void)Sig;
  Interrupted = 1;
}

void runJob(JobTy *J, const char *Exe, const BenchOpts *O,
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
                  O->Direct ? "direct" : "cached",
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

void progress(int Tty, int Done, int Total, const JobTy *J,
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

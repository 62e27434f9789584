// SPDX-License-Identifier: Apache-2.0
//
// ompx-io doctor [PATH...]: what a program linked as ompx-io is would get,
// as gdscheck and ais-check say it for their stacks: the plugins loaded
// and whose each device is, the locked-memory limit, whether each device's
// vendor storage fastpath (cuFile, AIS) can be used and why not, and for
// each PATH whether it takes O_DIRECT and on which file system. Exits 1
// when no device is served by an offload-io plugin or a PATH cannot be
// opened with O_DIRECT, so that a script can tell.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ompx-io.h"
#include "ompx_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/// The name of a file system type of statfs(2), or NULL.
static const char *fileSystemName(long Type) {
  switch ((unsigned long)Type) {
  case 0xEF53UL: return "ext2/3/4";
  case 0x58465342UL: return "xfs";
  case 0x9123683EUL: return "btrfs";
  case 0x01021994UL: return "tmpfs";
  case 0x794C7630UL: return "overlayfs";
  case 0x6969UL: return "nfs";
  case 0x65735546UL: return "fuse";
  case 0x2FC12FC1UL: return "zfs";
  case 0x0BD00BD0UL: return "lustre";
  case 0x47504653UL: return "gpfs";
  case 0x5346544EUL: return "ntfs";
  default: return NULL;
  }
}

/// Whether \p Path (a file, or a directory in which a file is created and
/// removed) opens with O_DIRECT; 1 ok, 0 not (the reason printed).
static int checkDirect(const char *Path) {
  struct stat St;
  if (stat(Path, &St)) {
    printf("  %s: cannot stat: %s\n", Path, strerror(errno));
    return 0;
  }
  struct statfs Fs;
  char FsName[32] = "unknown file system";
  if (statfs(Path, &Fs) == 0) {
    const char *Name = fileSystemName(Fs.f_type);
    if (Name)
      snprintf(FsName, sizeof(FsName), "%s", Name);
    else
      snprintf(FsName, sizeof(FsName), "file system 0x%lx",
               (unsigned long)Fs.f_type);
  }
  int Fd;
  char Probe[PATH_MAX] = "";
  if (S_ISDIR(St.st_mode)) {
    snprintf(Probe, sizeof(Probe), "%s/.ompx-io-doctor.XXXXXX", Path);
    int Tmp = mkstemp(Probe);
    if (Tmp < 0) {
      printf("  %s (%s): cannot create a file to test: %s\n", Path, FsName,
             strerror(errno));
      return 0;
    }
    close(Tmp);
    Fd = open(Probe, O_RDWR | O_DIRECT);
  } else {
    Fd = open(Path, O_RDONLY | O_DIRECT);
  }
  int Err = errno;
  if (*Probe)
    unlink(Probe);
  if (Fd < 0) {
    printf("  %s (%s): O_DIRECT refused: %s%s\n", Path, FsName, strerror(Err),
           Err == EINVAL ? " (the file system does not take O_DIRECT; reads "
                           "go through the page cache)"
                         : "");
    return 0;
  }
  close(Fd);
  printf("  %s (%s): O_DIRECT ok\n", Path, FsName);
  return 1;
}

/// The locked-memory limit, and what it means for pinning.
static void printMemlock(void) {
  struct rlimit R;
  if (getrlimit(RLIMIT_MEMLOCK, &R)) {
    printf("Locked memory (RLIMIT_MEMLOCK): unknown (%s)\n", strerror(errno));
    return;
  }
  char Soft[32], Hard[32];
  if (R.rlim_cur == RLIM_INFINITY)
    snprintf(Soft, sizeof(Soft), "unlimited");
  else
    formatSize(R.rlim_cur, Soft, sizeof(Soft));
  if (R.rlim_max == RLIM_INFINITY)
    snprintf(Hard, sizeof(Hard), "unlimited");
  else
    formatSize(R.rlim_max, Hard, sizeof(Hard));
  printf("Locked memory (RLIMIT_MEMLOCK, ulimit -l): %s, hard limit %s", Soft,
         Hard);
  if (geteuid() == 0)
    printf("; root: not bound by it\n");
  else if (R.rlim_cur != RLIM_INFINITY && R.rlim_cur < (64ULL << 20))
    printf("; the host plugin's locks (mlock) fail beyond it: raise it "
           "(limits.conf memlock) to lock large buffers\n");
  else
    printf("\n");
}

int cmdDoctor(int Argc, char **Argv) {
  for (int I = 0; I < Argc; ++I)
    if (!strcmp(Argv[I], "-h") || !strcmp(Argv[I], "--help")) {
      printf("Usage: ompx-io doctor [PATH...]\n  Says which plugins a "
             "program linked as ompx-io is gets, the locked-memory\n  limit, "
             "whether each device's vendor storage fastpath can be used and "
             "why\n  not, and whether each PATH (a file, or a directory) "
             "takes O_DIRECT.\n  Exits 1 when no device is served by an "
             "offload-io plugin or a PATH\n  refuses O_DIRECT.\n");
      return 0;
    } else if (Argv[I][0] == '-') {
      usageError("doctor: unexpected option '%s'", Argv[I]);
    }
  int N = omp_get_num_devices();
  PluginList L;
  loadedPlugins(&L);
  printf("Plugins loaded:\n");
  for (int I = 0; I < L.Num; ++I)
    printf("  %s (%s)\n", L.Plugins[I].Path,
           L.Plugins[I].OffloadIO ? "offload-io" : "stock");
  int Ours = 0;
  printf("\nDevices (%d):\n", N);
  for (int D = 0; D < N; ++D) {
    // libomptarget ends the program if the probe's kernel cannot run:
    // flush what was printed first.
    fflush(stdout);
    DeviceProbe P;
    probeDevice(D, &L, &P);
    if (!P.Served) {
      printf("  %d: a stock plugin's: ompx_io calls fail with ENODEV\n", D);
      continue;
    }
    ++Ours;
    if (P.PathsErrno) {
      printf("  %d: offload-io %s plugin; paths unknown (%s)\n", D, P.Plugin,
             strerror(P.PathsErrno));
      continue;
    }
    const char *Fast = strstr(P.Why, "fastpath: ");
    if (P.Mask & (1u << OMPX_IO_PATH_FASTPATH))
      printf("  %d: offload-io %s plugin; vendor storage fastpath usable\n", D,
             P.Plugin);
    else
      printf("  %d: offload-io %s plugin; no vendor storage fastpath: %.*s\n",
             D, P.Plugin, Fast ? (int)strcspn(Fast + 10, "\n") : 7,
             Fast ? Fast + 10 : "unknown");
  }
  if (!Ours)
    printf("  none is served by offload-io: link the installed libompx_io, "
           "or see install.md in <prefix>/share/doc/offload-io\n");
  printf("\n");
  printMemlock();
  int DirectOk = 1;
  if (Argc) {
    printf("\nO_DIRECT (the direct and fastpath reads of disks need it):\n");
    for (int I = 0; I < Argc; ++I)
      DirectOk &= checkDirect(Argv[I]);
  }
  return Ours && DirectOk ? 0 : 1;
}

// The process's budget (ompx_io_get_process_budget): one pool of file
// workers serves every device (OMPX_IO_THREADS threads named oio-io-N,
// however many devices transfer), the defaults follow the CPU mask and the
// local rank share a launcher variable gives, and each value says where it
// came from. A NULL argument is refused with EINVAL.
//
// REQUIRES: host-plugin, ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env OFFLOADIO_HOST_NUM_DEVICES=4 OMPX_IO_THREADS=3 \
// RUN:   %libomptarget-run-generic %t.dat 3 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,ENV
// RUN: env OFFLOADIO_HOST_NUM_DEVICES=4 OMPI_COMM_WORLD_LOCAL_SIZE=4 \
// RUN:   OMPI_COMM_WORLD_LOCAL_RANK=1 \
// RUN:   %libomptarget-run-generic %t.dat 0 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,RANKS
// RUN: env OFFLOADIO_HOST_NUM_DEVICES=4 taskset -c 0 \
// RUN:   %libomptarget-run-generic %t.dat 0 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,MASK

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_test.h"
#include "ompx_io.h"

/// Threads of this process whose name starts with Prefix.
static int threadsNamed(const char *Prefix) {
  int N = 0;
  DIR *D = opendir("/proc/self/task");
  if (!D)
    return -1;
  struct dirent *E;
  while ((E = readdir(D))) {
    if (E->d_name[0] == '.')
      continue;
    char Path[96], Name[32] = "";
    snprintf(Path, sizeof(Path), "/proc/self/task/%s/comm", E->d_name);
    FILE *F = fopen(Path, "r");
    if (F) {
      if (!fgets(Name, sizeof(Name), F))
        Name[0] = 0;
      fclose(F);
    }
    N += strncmp(Name, Prefix, strlen(Prefix)) == 0;
  }
  closedir(D);
  return N;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  unsigned WantThreads = (unsigned)atoi(argv[2]);
  enum { SIZE = 1 << 20 };
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate(fd, SIZE))
    return 3;

  errno = 0;
  OT_EXPECT(ompx_io_get_process_budget(NULL) == -1 && errno == EINVAL,
            "a NULL budget is refused with EINVAL");
  ompx_io_process_budget_t B;
  OT_EXPECT(ompx_io_get_process_budget(&B) == 0 && B.io_threads_running == 0,
            "before any transfer no file worker runs");

  // A transfer on every device: the workers are the process's, not each
  // device's.
  int ndev = omp_get_num_devices();
  int errors = 0;
  for (int dev = 0; dev < ndev; ++dev) {
    void *d = omp_target_alloc(SIZE, dev);
    errors += ompx_target_pread(fd, d, SIZE, 0, dev) != SIZE;
    omp_target_free(d, dev);
  }
  OT_EXPECT(ndev == 4 && errors == 0, "4 devices read the file");
  OT_EXPECT(ompx_io_get_process_budget(&B) == 0, "the budget is reported");
  printf("cpus %u of %u online, budget %u from %s\n", B.cpus_in_mask,
         B.cpus_online, B.cpus, B.cpus_origin);
  printf("io threads %u (%u running) from %s\n", B.io_threads,
         B.io_threads_running, B.io_threads_origin);
  printf("copy threads %u from %s\n", B.copy_threads, B.copy_threads_origin);
  printf("pinned max %llu from %s\n", (unsigned long long)B.pinned_max,
         B.pinned_max_origin);
  printf("local rank %d of %u from '%s'\n", B.local_rank, B.local_ranks,
         B.ranks_variable);
  int Workers = threadsNamed("oio-io-");
  OT_EXPECT(Workers >= 1 && (unsigned)Workers == B.io_threads &&
                B.io_threads_running == B.io_threads,
            "one pool of oio-io threads serves all devices");
  if (WantThreads)
    OT_EXPECT(B.io_threads == WantThreads, "OMPX_IO_THREADS sizes the pool");
  OT_EXPECT(B.cpus >= 1 && B.cpus <= B.cpus_in_mask &&
                B.cpus_in_mask <= B.cpus_online,
            "the CPU budget lies within the mask");
  OT_EXPECT(B.io_threads <= 8 && (WantThreads || B.io_threads <= B.cpus),
            "the default pool fits the CPU budget");
  ompx_pinned_budget_t P;
  OT_EXPECT(ompx_io_get_pinned_budget(&P) == 0 && P.cap == B.pinned_max,
            "the pinned cap is the account's");
  OT_EXPECT(threadsNamed("oio-host-") >= 1, "host stream threads are named");
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: a NULL budget is refused with EINVAL
// CHECK: PASS: before any transfer no file worker runs
// CHECK: PASS: 4 devices read the file
// MASK: cpus 1 of {{[0-9]+}} online, budget 1 from the CPU mask (1 of
// RANKS: cpus {{[0-9]+}} of {{[0-9]+}} online, budget {{[0-9]+}} from
// ENV: io threads 3 (3 running) from the environment (OMPX_IO_THREADS=3)
// MASK: io threads 1 (1 running) from min(16, the CPU mask (1 of
// RANKS: io threads {{[0-9]+}} ({{[0-9]+}} running) from min(16,
// MASK: copy threads 0 from min(12, the CPU mask
// ENV: pinned max {{[0-9]+}} from a quarter of physical memory
// ENV-NOT: shared by
// RANKS: pinned max {{[0-9]+}} from a quarter of physical memory ({{[0-9]+}} MiB), at least 1024 MiB, shared by 4 local ranks (OMPI_COMM_WORLD_LOCAL_SIZE)
// ENV: local rank -1 of 1 from ''
// RANKS: local rank 1 of 4 from 'OMPI_COMM_WORLD_LOCAL_SIZE'
// CHECK-NOT: FAIL
// CHECK: failures: 0

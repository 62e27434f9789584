// Device memory the program allocated through the HSA runtime itself, as
// hipMalloc does (hsa_amd_memory_pool_allocate from a GPU agent's global
// pool), not through OpenMP: ompx_target_pread and ompx_target_pwrite take
// it on the device that GPU is, checked with hsa_amd_pointer_info. Data
// read into it, from its start and from inside it, is written back to
// another file exact. A transfer that runs past the end of the allocation
// is EFAULT and says how many bytes are left; memory of the other GPU
// agent is EFAULT on this device, naming that agent and the device that
// serves it, and is taken by that device; memory of the CPU's pool
// (hipHostMalloc) and freed memory are not the device's (EFAULT). The
// one target region (which starts the plugin and so the runtime)
// completes unexecuted (HSA_EMU_DISPATCH=noop).
//
// REQUIRES: amdgcn-amd-amdhsa, hsa-emulation, ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env HSA_EMU_NUM_GPUS=2 HSA_EMU_DISPATCH=noop %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ompx_io.h"

#define SIZE (1 << 20)
#define FILE_SIZE (2 * SIZE)
#define MAX_GPUS 8

static unsigned char pat(size_t o) { return (unsigned char)(o * 7 + (o >> 12) + 3); }

static void *lib;
#define SYM(name) ((__typeof__(&name))dlsym(lib, #name))

static __typeof__(&hsa_agent_get_info) agent_info;
static __typeof__(&hsa_amd_agent_iterate_memory_pools) iterate_pools;
static __typeof__(&hsa_amd_memory_pool_get_info) pool_info;
static __typeof__(&hsa_amd_memory_pool_allocate) pool_allocate;
static __typeof__(&hsa_amd_memory_pool_free) pool_free;

static hsa_amd_memory_pool_t gpu_pools[MAX_GPUS], cpu_pool;
static int num_gpus;

// The first global pool the runtime allocates from, as hipMalloc takes
// (hipHostMalloc: the CPU's).
static hsa_status_t find_pool(hsa_amd_memory_pool_t pool, void *data) {
  hsa_amd_memory_pool_t *out = data;
  hsa_amd_segment_t segment;
  bool allocates = false;
  pool_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment);
  pool_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &allocates);
  if (segment == HSA_AMD_SEGMENT_GLOBAL && allocates && !out->handle)
    *out = pool;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_agents(hsa_agent_t agent, void *data) {
  (void)data;
  hsa_device_type_t type;
  agent_info(agent, HSA_AGENT_INFO_DEVICE, &type);
  if (type == HSA_DEVICE_TYPE_GPU && num_gpus < MAX_GPUS)
    iterate_pools(agent, find_pool, &gpu_pools[num_gpus++]);
  else if (type == HSA_DEVICE_TYPE_CPU)
    iterate_pools(agent, find_pool, &cpu_pool);
  return HSA_STATUS_SUCCESS;
}

static void *allocate(hsa_amd_memory_pool_t pool, size_t size) {
  void *p = NULL;
  if (pool_allocate(pool, size, 0, &p) != HSA_STATUS_SUCCESS)
    printf("hsa_amd_memory_pool_allocate of %zu bytes failed\n", size);
  return p;
}

static const char *errno_name(int e) {
  switch (e) {
  case EFAULT: return "EFAULT";
  case 0: return "0";
  default: return strerror(e);
  }
}

// The result of one transfer: bytes, or -1 with errno and the last error.
static void report(const char *what, ssize_t n) {
  if (n >= 0)
    printf("%s: %zd bytes\n", what, n);
  else
    printf("%s: -1 %s: %s\n", what, errno_name(errno), ompx_io_last_error());
}

// Bytes of the file at path from offset off that differ from the pattern
// at pat_off.
static size_t bad_file(int fd, size_t n, off_t off, size_t pat_off) {
  unsigned char *h = malloc(n);
  size_t bad = n;
  if (pread(fd, h, n, off) == (ssize_t)n) {
    bad = 0;
    for (size_t i = 0; i < n; ++i)
      bad += h[i] != pat(pat_off + i);
  }
  free(h);
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  int dev = omp_get_default_device();
  // The first target region has the plugin start the runtime.
  int x = 0;
#pragma omp target map(tofrom : x)
  x += 1;

  lib = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_NOLOAD);
  // CHECK: runtime loaded by the plugin: yes
  printf("runtime loaded by the plugin: %s\n", lib ? "yes" : "no");
  if (!lib)
    return 1;
  agent_info = SYM(hsa_agent_get_info);
  iterate_pools = SYM(hsa_amd_agent_iterate_memory_pools);
  pool_info = SYM(hsa_amd_memory_pool_get_info);
  pool_allocate = SYM(hsa_amd_memory_pool_allocate);
  pool_free = SYM(hsa_amd_memory_pool_free);
  __typeof__(&hsa_iterate_agents) iterate_agents = SYM(hsa_iterate_agents);
  iterate_agents(find_agents, NULL);
  // CHECK: GPU agents: 2, devices: 2
  printf("GPU agents: %d, devices: %d\n", num_gpus, omp_get_num_devices());

  char in_path[4096], out_path[4096];
  snprintf(in_path, sizeof in_path, "%s.in", argv[1]);
  snprintf(out_path, sizeof out_path, "%s.out", argv[1]);
  int in = open(in_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  int out = open(out_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  unsigned char *h = malloc(FILE_SIZE);
  for (size_t i = 0; i < FILE_SIZE; ++i)
    h[i] = pat(i);
  if (in < 0 || out < 0 || pwrite(in, h, FILE_SIZE, 0) != FILE_SIZE)
    return 1;

  // Device memory of this device's GPU agent.
  char *a = allocate(gpu_pools[0], SIZE);
  // CHECK: read whole: 1048576 bytes
  report("read whole", ompx_target_pread(in, a, SIZE, 4096, dev));
  // CHECK: write whole: 1048576 bytes
  report("write whole", ompx_target_pwrite(out, a, SIZE, 0, dev));
  // CHECK: whole round trip: 0 bad bytes
  printf("whole round trip: %zu bad bytes\n", bad_file(out, SIZE, 0, 4096));
  // From inside the allocation to its last byte.
  // CHECK: read inside: 1044480 bytes
  report("read inside", ompx_target_pread(in, a + 4096, SIZE - 4096, 100, dev));
  // CHECK: write inside: 1044480 bytes
  report("write inside", ompx_target_pwrite(out, a + 4096, SIZE - 4096, 0, dev));
  // CHECK: inside round trip: 0 bad bytes
  printf("inside round trip: %zu bad bytes\n",
         bad_file(out, SIZE - 4096, 0, 100));

  // Past the end of the allocation, reading and writing.
  // CHECK: read past the end: -1 EFAULT: {{.*}}1048576 bytes on device 0: buffer 0x{{[0-9a-f]+}} has only 1044480 bytes left in its allocation
  report("read past the end", ompx_target_pread(in, a + 4096, SIZE, 0, dev));
  // CHECK: write past the end: -1 EFAULT: {{.*}}has only 1 bytes left in its allocation
  report("write past the end", ompx_target_pwrite(out, a + SIZE - 1, 2, 0, dev));

  // Memory of the other GPU agent: not this device's, but its own
  // device's.
  if (num_gpus >= 2 && omp_get_num_devices() >= 2) {
    char *b = allocate(gpu_pools[1], SIZE);
    // CHECK: other agent's on this device: -1 EFAULT: {{.*}}4096 bytes on device 0: buffer 0x{{[0-9a-f]+}} is memory of AMD GPU agent 1 (device 1 of the amdgpu plugin), not of this device
    report("other agent's on this device",
           ompx_target_pread(in, b, 4096, 0, dev));
    // CHECK: other agent's on its device: 1048576 bytes
    report("other agent's on its device",
           ompx_target_pread(in, b, SIZE, 0, dev + 1));
    // CHECK: other agent's written: 1048576 bytes
    report("other agent's written",
           ompx_target_pwrite(out, b, SIZE, 0, dev + 1));
    // CHECK: other agent's round trip: 0 bad bytes
    printf("other agent's round trip: %zu bad bytes\n",
           bad_file(out, SIZE, 0, 0));
    pool_free(b);
  }

  // Host memory of the CPU's pool is not device memory.
  char *c = allocate(cpu_pool, 4096);
  // CHECK: CPU pool memory: -1 EFAULT: {{.*}}is not memory of this device
  report("CPU pool memory", ompx_target_pread(in, c, 4096, 0, dev));
  pool_free(c);

  // Nor is memory freed.
  pool_free(a);
  // CHECK: freed memory: -1 EFAULT: {{.*}}is not memory of this device
  report("freed memory", ompx_target_pread(in, a, 4096, 0, dev));

  close(in);
  close(out);
  unlink(in_path);
  unlink(out_path);
  free(h);
  // CHECK: done
  printf("done\n");
  return 0;
}

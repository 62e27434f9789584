// The HSA emulation's AIS calls on their own (no plugin): whether dlsym
// finds hsa_amd_ais_file_read/write (HSA_EMU_AIS=off, the default: no), and
// what they return for each rule of the real call chain (ROCr, libhsakmt,
// KFD): size 0 or a null pointer -> INVALID_ARGUMENT; memory the runtime
// does not know, or a range past the end of an allocation ->
// INVALID_ALLOCATION; otherwise HSA_STATUS_ERROR with *status = -errno and
// errno set: a negative fd, a buffer that is not VRAM, an offset, size or
// address not 4 KiB aligned -> EINVAL; a closed fd -> EBADF; a read that
// meets end of file -> EIO (with the bytes it did move). Aligned reads and
// writes of device memory succeed with exact data. HSA_EMU_AIS=enodev fails
// every transfer that passes the argument checks with ENODEV, eremoteio
// with EREMOTEIO; enotty fails them as a driver without the AIS ioctl does:
// errno ENOTTY, status and count untouched. (The program
// runs no target region, so the plugin check is off.)
//
// REQUIRES: amdgcn-amd-amdhsa, hsa-emulation
// RUN: %clang-generic %s -o %t -ldl
// RUN: env -u OFFLOADIO_EXPECT_PLUGIN -u HSA_EMU_AIS %t %t.dat | %fcheck-generic --check-prefix=OFF
// RUN: env -u OFFLOADIO_EXPECT_PLUGIN HSA_EMU_AIS=off %t %t.dat | %fcheck-generic --check-prefix=OFF
// RUN: env -u OFFLOADIO_EXPECT_PLUGIN HSA_EMU_AIS=on %t %t.dat | %fcheck-generic --check-prefix=ON
// RUN: env -u OFFLOADIO_EXPECT_PLUGIN HSA_EMU_AIS=enodev %t %t.dat | %fcheck-generic --check-prefix=NOP2P
// RUN: env -u OFFLOADIO_EXPECT_PLUGIN HSA_EMU_AIS=eremoteio %t %t.dat | %fcheck-generic --check-prefix=REMOTE
// RUN: env -u OFFLOADIO_EXPECT_PLUGIN HSA_EMU_AIS=enotty %t %t.dat | %fcheck-generic --check-prefix=NOTTY

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
// The device pass pre-includes system headers before _GNU_SOURCE takes
// effect; its code never opens files.
#if !defined(O_DIRECT) && defined(__AMDGCN__)
#define O_DIRECT 0
#endif
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// hsa_ext_amd.h of interface 1.14; the ROCm 5.2 headers lack it.
typedef union {
  void *handle;
  int fd;
  uint8_t pad[8];
} ais_handle_t;
typedef hsa_status_t (*ais_fn_t)(ais_handle_t, void *, uint64_t, int64_t,
                                 uint64_t *, int32_t *);

static ais_fn_t ais_read, ais_write;
static void *lib;
#define SYM(name) ((__typeof__(&name))dlsym(lib, #name))

struct pools {
  hsa_amd_memory_pool_t gpu, cpu;
  __typeof__(&hsa_amd_memory_pool_get_info) get_info;
};

static hsa_status_t find_pool(hsa_amd_memory_pool_t pool, void *data) {
  struct pools *p = data;
  hsa_amd_segment_t segment;
  p->get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment);
  if (segment == HSA_AMD_SEGMENT_GLOBAL && !p->gpu.handle)
    p->gpu = pool;
  return HSA_STATUS_SUCCESS;
}

static hsa_agent_t gpu_agent, cpu_agent;
static __typeof__(&hsa_agent_get_info) agent_info;

static hsa_status_t find_agents(hsa_agent_t agent, void *data) {
  hsa_device_type_t type;
  agent_info(agent, HSA_AGENT_INFO_DEVICE, &type);
  if (type == HSA_DEVICE_TYPE_GPU && !gpu_agent.handle)
    gpu_agent = agent;
  if (type == HSA_DEVICE_TYPE_CPU && !cpu_agent.handle)
    cpu_agent = agent;
  return HSA_STATUS_SUCCESS;
}

static const char *status_name(hsa_status_t s) {
  switch (s) {
  case HSA_STATUS_SUCCESS: return "SUCCESS";
  case HSA_STATUS_ERROR: return "ERROR";
  case HSA_STATUS_ERROR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
  case HSA_STATUS_ERROR_INVALID_ALLOCATION: return "INVALID_ALLOCATION";
  default: return "other";
  }
}

static const char *errno_name(int e) {
  switch (e) {
  case 0: return "0";
  case EINVAL: return "EINVAL";
  case EBADF: return "EBADF";
  case EIO: return "EIO";
  case ENODEV: return "ENODEV";
  case EREMOTEIO: return "EREMOTEIO";
  case ENOTTY: return "ENOTTY";
  default: return strerror(e);
  }
}

static void call(const char *what, ais_fn_t fn, int fd, void *ptr,
                 uint64_t size, int64_t offset) {
  ais_handle_t h;
  memset(&h, 0, sizeof h);
  h.fd = fd;
  uint64_t copied = 12345;
  int32_t status = 12345;
  errno = 0;
  hsa_status_t s = fn(h, ptr, size, offset, &copied, &status);
  int e = errno;
  if ((s == HSA_STATUS_SUCCESS || s == HSA_STATUS_ERROR) && status != 12345)
    printf("%s: %s status %s%s copied %llu errno %s\n", what, status_name(s),
           status < 0 ? "-" : "", errno_name(status < 0 ? -status : status),
           (unsigned long long)copied, errno_name(e));
  else if (s == HSA_STATUS_ERROR)
    printf("%s: ERROR (status untouched, copied %s) errno %s\n", what,
           copied == 12345 ? "untouched" : "written", errno_name(e));
  else
    printf("%s: %s (status %s, copied %s)\n", what, status_name(s),
           status == 12345 ? "untouched" : "written",
           copied == 12345 ? "untouched" : "written");
}

#define PAGE 4096
#define FILE_SIZE (3 * PAGE + 100)

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  lib = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("dlopen: %s\n", dlerror());
    return 1;
  }
  ais_read = (ais_fn_t)dlsym(lib, "hsa_amd_ais_file_read");
  ais_write = (ais_fn_t)dlsym(lib, "hsa_amd_ais_file_write");
  printf("hsa_amd_ais_file_read: %s\n", ais_read ? "present" : "absent");
  printf("hsa_amd_ais_file_write: %s\n", ais_write ? "present" : "absent");
  if (!ais_read || !ais_write)
    return 0;

  unsigned char data[FILE_SIZE];
  for (size_t i = 0; i < FILE_SIZE; ++i)
    data[i] = (unsigned char)(i * 5 + 1);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, data, FILE_SIZE) != FILE_SIZE)
    return 3;
  int dfd = open(argv[1], O_RDWR | O_DIRECT);
  if (dfd < 0)
    dfd = fd; // No direct IO here: the emulation does not need it.

  SYM(hsa_init)();
  agent_info = SYM(hsa_agent_get_info);
  SYM(hsa_iterate_agents)(find_agents, NULL);
  struct pools p = {{0}, {0}, SYM(hsa_amd_memory_pool_get_info)};
  SYM(hsa_amd_agent_iterate_memory_pools)(gpu_agent, find_pool, &p);
  hsa_amd_memory_pool_t gpu_pool = p.gpu;
  p.gpu.handle = 0;
  SYM(hsa_amd_agent_iterate_memory_pools)(cpu_agent, find_pool, &p);
  hsa_amd_memory_pool_t cpu_pool = p.gpu;
  char *vram = NULL, *sys = NULL;
  SYM(hsa_amd_memory_pool_allocate)(gpu_pool, 8 * PAGE, 0, (void **)&vram);
  SYM(hsa_amd_memory_pool_allocate)(cpu_pool, 8 * PAGE, 0, (void **)&sys);
  printf("allocated: %s\n", vram && sys ? "yes" : "no");
  memset(vram, 0, 8 * PAGE);

  call("read 2 pages", ais_read, dfd, vram, 2 * PAGE, 0);
  // The emulation's device memory is host memory: check it directly.
  printf("data: %s\n", memcmp(vram, data, 2 * PAGE) ? "wrong" : "exact");
  call("size 0", ais_read, dfd, vram, 0, 0);
  call("null pointer", ais_read, dfd, NULL, PAGE, 0);
  char *heap = aligned_alloc(PAGE, PAGE);
  call("malloc memory", ais_read, dfd, heap, PAGE, 0);
  call("past the allocation", ais_read, dfd, vram + 6 * PAGE, 4 * PAGE, 0);
  call("negative fd", ais_read, -1, vram, PAGE, 0);
  call("system memory", ais_read, dfd, sys, PAGE, 0);
  call("offset 512", ais_read, dfd, vram, PAGE, 512);
  call("size 1000", ais_read, dfd, vram, 1000, 0);
  call("address + 512", ais_read, dfd, vram + 512, PAGE, 0);
  call("closed fd", ais_read, 999, vram, PAGE, 0);
  call("read across end of file", ais_read, dfd, vram, 4 * PAGE, 0);
  call("read at end of file", ais_read, dfd, vram, PAGE, 4 * PAGE);
  memcpy(vram, data, PAGE);
  call("write a page at 4 pages", ais_write, dfd, vram, PAGE, 4 * PAGE);
  unsigned char back[PAGE];
  printf("written: %s\n",
         pread(fd, back, PAGE, 4 * PAGE) == PAGE && !memcmp(back, data, PAGE)
             ? "exact"
             : "wrong");
  call("write at offset 100", ais_write, dfd, vram, PAGE, 100);
  free(heap);
  return 0;
}

// OFF: hsa_amd_ais_file_read: absent
// OFF-NEXT: hsa_amd_ais_file_write: absent
// OFF-NOT: {{.}}

// ON: hsa_amd_ais_file_read: present
// ON-NEXT: hsa_amd_ais_file_write: present
// ON-NEXT: allocated: yes
// ON-NEXT: read 2 pages: SUCCESS status 0 copied 8192 errno 0
// ON-NEXT: data: exact
// ON-NEXT: size 0: INVALID_ARGUMENT (status untouched, copied untouched)
// ON-NEXT: null pointer: INVALID_ARGUMENT (status untouched, copied untouched)
// ON-NEXT: malloc memory: INVALID_ALLOCATION (status untouched, copied untouched)
// ON-NEXT: past the allocation: INVALID_ALLOCATION (status untouched, copied untouched)
// ON-NEXT: negative fd: ERROR status -EINVAL copied 0 errno EINVAL
// ON-NEXT: system memory: ERROR status -EINVAL copied 0 errno EINVAL
// ON-NEXT: offset 512: ERROR status -EINVAL copied 0 errno EINVAL
// ON-NEXT: size 1000: ERROR status -EINVAL copied 0 errno EINVAL
// ON-NEXT: address + 512: ERROR status -EINVAL copied 0 errno EINVAL
// ON-NEXT: closed fd: ERROR status -EBADF copied 0 errno EBADF
// ON-NEXT: read across end of file: ERROR status -EIO copied 12388 errno EIO
// ON-NEXT: read at end of file: ERROR status -EIO copied 0 errno EIO
// ON-NEXT: write a page at 4 pages: SUCCESS status 0 copied 4096 errno 0
// ON-NEXT: written: exact
// ON-NEXT: write at offset 100: ERROR status -EINVAL copied 0 errno EINVAL

// NOP2P: hsa_amd_ais_file_read: present
// NOP2P-NEXT: hsa_amd_ais_file_write: present
// NOP2P-NEXT: allocated: yes
// NOP2P-NEXT: read 2 pages: ERROR status -ENODEV copied 0 errno ENODEV
// NOP2P-NEXT: data: wrong
// NOP2P-NEXT: size 0: INVALID_ARGUMENT (status untouched, copied untouched)
// NOP2P-NEXT: null pointer: INVALID_ARGUMENT (status untouched, copied untouched)
// NOP2P-NEXT: malloc memory: INVALID_ALLOCATION (status untouched, copied untouched)
// NOP2P-NEXT: past the allocation: INVALID_ALLOCATION (status untouched, copied untouched)
// NOP2P-NEXT: negative fd: ERROR status -EINVAL copied 0 errno EINVAL
// NOP2P-NEXT: system memory: ERROR status -ENODEV copied 0 errno ENODEV
// NOP2P-NEXT: offset 512: ERROR status -ENODEV copied 0 errno ENODEV
// NOP2P-NEXT: size 1000: ERROR status -ENODEV copied 0 errno ENODEV
// NOP2P-NEXT: address + 512: ERROR status -ENODEV copied 0 errno ENODEV
// NOP2P-NEXT: closed fd: ERROR status -ENODEV copied 0 errno ENODEV
// NOP2P-NEXT: read across end of file: ERROR status -ENODEV copied 0 errno ENODEV
// NOP2P-NEXT: read at end of file: ERROR status -ENODEV copied 0 errno ENODEV
// NOP2P-NEXT: write a page at 4 pages: ERROR status -ENODEV copied 0 errno ENODEV
// NOP2P-NEXT: written: wrong
// NOP2P-NEXT: write at offset 100: ERROR status -ENODEV copied 0 errno ENODEV

// REMOTE: read 2 pages: ERROR status -EREMOTEIO copied 0 errno EREMOTEIO
// REMOTE: malloc memory: INVALID_ALLOCATION (status untouched, copied untouched)
// REMOTE: negative fd: ERROR status -EINVAL copied 0 errno EINVAL
// REMOTE: offset 512: ERROR status -EREMOTEIO copied 0 errno EREMOTEIO

// NOTTY: read 2 pages: ERROR (status untouched, copied untouched) errno ENOTTY
// NOTTY: size 0: INVALID_ARGUMENT (status untouched, copied untouched)
// NOTTY: malloc memory: INVALID_ALLOCATION (status untouched, copied untouched)
// NOTTY: negative fd: ERROR (status untouched, copied untouched) errno ENOTTY
// NOTTY: write a page at 4 pages: ERROR (status untouched, copied untouched) errno ENOTTY

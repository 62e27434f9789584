// SPDX-License-Identifier: Apache-2.0
//
// A program that uses offload-io the way an application does: built
// against an installed offload-io (find_package or pkg-config, see
// docs/install.md), run with no LD_LIBRARY_PATH. It reads a file into
// device memory with ompx_target_pread, copies it back into a buffer locked
// with llvm_omp_target_lock_mem, checks every byte, and proves that our
// plugin served the device: ompx_io_get_stats and ompx_target_lock_info
// answer only on a device of an offload-io plugin (a stock plugin fails
// them with ENODEV). It prints the file each loaded plugin came from, so
// that a runner can check its directory too. Exit status 0 only when all
// of it holds.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <link.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ompx_io.h"
#include "ompx_lock.h"
#include "ompx_version.h"

enum { FileBytes = (1 << 20) + 4093 };

static int fail(const char *What) {
  fprintf(stderr, "consumer: FAILED: %s (errno %d: %s)\n", What, errno,
          strerror(errno));
  return 1;
}

static unsigned char patternByte(size_t I) {
  return (unsigned char)(I * 131u + (I >> 9) + 7u);
}

// Prints "plugin: <path>" for every loaded libomptarget plugin.
static int printPlugin(struct dl_phdr_info *Info, size_t Size, void *Count) {
  (void)Size;
  const char *Base = strrchr(Info->dlpi_name, '/');
  Base = Base ? Base + 1 : Info->dlpi_name;
  if (strncmp(Base, "libomptarget.rtl.", 17) == 0) {
    printf("plugin: %s\n", Info->dlpi_name);
    ++*(int *)Count;
  }
  return 0;
}

// Writes the pattern into a new temporary file; returns its descriptor.
static int makeFile(void) {
  const char *Dir = getenv("TMPDIR");
  char Path[4096];
  snprintf(Path, sizeof(Path), "%s/offload-io-consumer-XXXXXX",
           Dir && *Dir ? Dir : "/tmp");
  int Fd = mkstemp(Path);
  if (Fd < 0)
    return -1;
  unlink(Path);
  unsigned char *Data = malloc(FileBytes);
  if (!Data) {
    close(Fd);
    return -1;
  }
  for (size_t I = 0; I < FileBytes; ++I)
    Data[I] = patternByte(I);
  ssize_t Written = pwrite(Fd, Data, FileBytes, 0);
  free(Data);
  if (Written != FileBytes) {
    close(Fd);
    return -1;
  }
  return Fd;
}

int main(void) {
  // The headers and the library the program runs with must agree.
  const char *Runtime = ompx_io_version(NULL, NULL, NULL);
  if (strcmp(Runtime, OFFLOADIO_VERSION_STRING) != 0) {
    fprintf(stderr, "consumer: FAILED: headers of offload-io %s, library %s\n",
            OFFLOADIO_VERSION_STRING, Runtime);
    return 1;
  }
  if (omp_get_num_devices() < 1) {
    errno = ENODEV;
    return fail("no OpenMP offload device");
  }
  int Device = omp_get_default_device();
  int Host = omp_get_initial_device();
  // First, so that a runner sees the plugins also when a check fails.
  int Plugins = 0;
  dl_iterate_phdr(printPlugin, &Plugins);
  if (Plugins == 0) {
    errno = ENOENT;
    return fail("no libomptarget plugin is loaded");
  }
  fflush(stdout);

  int Fd = makeFile();
  if (Fd < 0)
    return fail("cannot write the temporary file");
  void *DeviceBuf = omp_target_alloc(FileBytes, Device);
  if (!DeviceBuf)
    return fail("omp_target_alloc");
  ssize_t Read = ompx_target_pread(Fd, DeviceBuf, FileBytes, 0, Device);
  if (Read != FileBytes)
    return fail("ompx_target_pread did not read the whole file");

  unsigned char *HostBuf = aligned_alloc(4096, 2 << 20);
  if (!HostBuf)
    return fail("aligned_alloc");
  memset(HostBuf, 0, FileBytes);
  if (!llvm_omp_target_lock_mem(HostBuf, FileBytes, Device))
    return fail("llvm_omp_target_lock_mem");
  ompx_lock_region_t Region;
  if (ompx_target_lock_info(HostBuf + 100, Device, &Region) != 1)
    return fail("ompx_target_lock_info does not report the locked buffer");
  if (Region.host_ptr != HostBuf || Region.size != FileBytes) {
    errno = EINVAL;
    return fail("ompx_target_lock_info reports another region");
  }

  if (omp_target_memcpy(HostBuf, DeviceBuf, FileBytes, 0, 0, Host, Device))
    return fail("omp_target_memcpy from the device");
  for (size_t I = 0; I < FileBytes; ++I)
    if (HostBuf[I] != patternByte(I)) {
      fprintf(stderr, "consumer: FAILED: byte %zu is %u, the file has %u\n", I,
              HostBuf[I], patternByte(I));
      return 1;
    }

  ompx_io_stats_t Stats;
  if (ompx_io_get_stats(Device, &Stats))
    return fail("ompx_io_get_stats (the device is not served by offload-io)");
  uint64_t BytesRead = 0;
  for (int P = 0; P < OMPX_IO_NUM_PATHS; ++P)
    BytesRead += Stats.bytes_read[P];
  if (BytesRead != FileBytes) {
    errno = EINVAL;
    return fail("ompx_io_get_stats does not count the read");
  }

  llvm_omp_target_unlock_mem(HostBuf, Device);
  if (ompx_target_lock_info(HostBuf, Device, &Region) != 0)
    return fail("the buffer is still locked after llvm_omp_target_unlock_mem");

  printf("consumer: OK: %d bytes read from a file into device %d, checked "
         "through a locked buffer; served by offload-io\n",
         FileBytes, Device);
  omp_target_free(DeviceBuf, Device);
  free(HostBuf);
  close(Fd);
  return 0;
}

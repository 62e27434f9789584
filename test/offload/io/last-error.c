// ompx_io_last_error: the message of the last failed ompx_* call of the
// calling thread. It names the call and says why: the argument at fault,
// a device that does not exist, or the plugin's own message for errors it
// finds (a bad descriptor). Successful calls leave it; another thread's
// failures do not touch it; a thread that never failed has "".
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat 2>&1 | %fcheck-generic

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"

static char ThreadSaw[2][512];

static void *otherThread(void *Arg) {
  (void)Arg;
  snprintf(ThreadSaw[0], sizeof ThreadSaw[0], "%s", ompx_io_last_error());
  (void)ompx_io_get_stats(omp_get_default_device(), NULL);
  snprintf(ThreadSaw[1], sizeof ThreadSaw[1], "%s", ompx_io_last_error());
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int fd = ot_open_zeros(argv[1]);
  if (fd < 0)
    return 3;
  int dev = omp_get_default_device();
  void *dbuf = omp_target_alloc(4096, dev);

  OT_EXPECT(!strcmp(ompx_io_last_error(), ""), "no failure yet: empty");

  EXPECT_ERRNO(ompx_io_wait(NULL), EINVAL, "wait(NULL)");
  printf("wait: %s\n", ompx_io_last_error());

  EXPECT_ERRNO(ompx_target_pread(fd, dbuf, 64, 0, 1000), ENODEV,
               "pread on device 1000");
  printf("no device: %s\n", ompx_io_last_error());

  EXPECT_ERRNO(ompx_target_pread(-1, dbuf, 64, 0, dev), EBADF,
               "pread of fd -1");
  printf("bad fd: %s\n", ompx_io_last_error());
  char Kept[512];
  snprintf(Kept, sizeof Kept, "%s", ompx_io_last_error());

  // A failure of the transfer itself, after submission, still names the
  // call the program made, on either device.
  int full = open("/dev/full", O_WRONLY);
  EXPECT_ERRNO(ompx_target_pwrite(full, dbuf, 64, 0, dev), ENOSPC,
               "write to /dev/full");
  printf("transfer: %s\n", ompx_io_last_error());
  char hbuf[64] = {0};
  EXPECT_ERRNO(ompx_target_pwrite(full, hbuf, 64, 0, omp_get_initial_device()),
               ENOSPC, "write of host memory to /dev/full");
  printf("host transfer: %s\n", ompx_io_last_error());
  close(full);
  EXPECT_ERRNO(ompx_target_pread(-1, dbuf, 64, 0, dev), EBADF,
               "pread of fd -1 again");
  snprintf(Kept, sizeof Kept, "%s", ompx_io_last_error());

  OT_EXPECT(ompx_target_pread(fd, dbuf, 4096, 0, dev) == 4096,
            "a good read succeeds");
  OT_EXPECT(!strcmp(ompx_io_last_error(), Kept),
            "success leaves the last error");

  pthread_t T;
  pthread_create(&T, NULL, otherThread, NULL);
  pthread_join(T, NULL);
  OT_EXPECT(!strcmp(ThreadSaw[0], ""), "a new thread starts empty");
  printf("other thread: %s\n", ThreadSaw[1]);
  OT_EXPECT(!strcmp(ompx_io_last_error(), Kept),
            "another thread's failure leaves this thread's message");

  omp_target_free(dbuf, dev);
  OT_SUMMARY();
  return 0;
}

// No device-not-served warning: every device here is ours.
// CHECK-NOT: warning
// CHECK: PASS: no failure yet: empty
// CHECK: PASS: wait(NULL) -> -1 EINVAL
// CHECK: wait: ompx_io_wait: request is NULL
// CHECK: PASS: pread on device 1000 -> -1 ENODEV
// CHECK: no device: ompx_target_pread: device 1000 does not exist (omp_get_num_devices() is {{[0-9]+}})
// CHECK: PASS: pread of fd -1 -> -1 EBADF
// CHECK: bad fd: ompx_target_pread on device {{[0-9]+}}: offload-io({{[^)]+}}) device {{[0-9]+}}: {{.*[^ ]}}
// CHECK: PASS: write to /dev/full -> -1 ENOSPC
// CHECK: transfer: ompx_target_pwrite on device {{[0-9]+}}: {{.*}}No space left on device
// CHECK: PASS: write of host memory to /dev/full -> -1 ENOSPC
// CHECK: host transfer: ompx_target_pwrite: pwrite(fd {{[0-9]+}}, {{.*}}, 64 bytes, offset 0): No space left on device
// CHECK: PASS: a good read succeeds
// CHECK: PASS: success leaves the last error
// CHECK: PASS: a new thread starts empty
// CHECK: other thread: ompx_io_get_stats: stats is NULL
// CHECK: PASS: another thread's failure leaves this thread's message
// CHECK-NOT: FAIL
// CHECK: failures: 0

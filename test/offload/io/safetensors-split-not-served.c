// With the stock plugins loaded instead of ours, ompx_safetensors_load_split
// and ompx_safetensors_load_mapped refuse a device that no offload-io plugin
// serves with ENODEV before anything is allocated, naming the device and a
// tensor that was to go there; the initial device (host memory, which
// libompx_io reads itself) still loads.
//
// REQUIRES: ompx-io, x86_64-pc-linux-gnu
// RUN: %libomptarget-compile-generic
// RUN: env ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH=%stock-ld-path \
// RUN:   OFFLOADIO_EXPECT_PLUGIN_DIR=%stock-plugin-dir \
// RUN:   %libomptarget-run-generic %t.st 2>&1 | %fcheck-generic

#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"
#include "ompx_safetensors.h"

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  const char *json = "{\"w\": {\"dtype\": \"U8\", \"shape\": [3], "
                     "\"data_offsets\": [0, 3]}}";
  unsigned char head[8] = {(unsigned char)strlen(json)};
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, head, 8) != 8 ||
      write(fd, json, strlen(json)) != (ssize_t)strlen(json) ||
      write(fd, "abc", 3) != 3)
    return 3;
  close(fd);
  ompx_safetensors_t c = NULL;
  OT_EXPECT(ompx_safetensors_open(argv[1], &c) == 0, "open");
  OT_EXPECT(omp_get_num_devices() > 0, "the stock plugin has devices");
  int devices[] = {0};
  ompx_safetensors_placement_t p = (ompx_safetensors_placement_t)1;
  EXPECT_ERRNO(ompx_safetensors_load_split(c, NULL, 0, devices, 1, &p), ENODEV,
               "split onto device 0");
  printf("split: %s\n", ompx_io_last_error());
  OT_EXPECT(p == NULL, "no placement");
  EXPECT_ERRNO(ompx_safetensors_load_mapped(c, NULL, 0, devices, &p), ENODEV,
               "map onto device 0");
  int host = omp_get_initial_device();
  OT_EXPECT(ompx_safetensors_load_split(c, NULL, 0, &host, 1, &p) == 0,
            "the initial device loads: %s", ompx_io_last_error());
  ompx_safetensors_placed_t pl = {0};
  OT_EXPECT(ompx_safetensors_placement_tensor(p, 0, &pl) == 0 &&
                pl.device_num == host && pl.device_ptr &&
                memcmp(pl.device_ptr, "abc", 3) == 0,
            "its bytes in host memory");
  ompx_safetensors_placement_free(p);
  ompx_safetensors_close(c);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: open
// CHECK: PASS: the stock plugin has devices
// CHECK: PASS: split onto device 0 -> -1 ENODEV
// CHECK: split: ompx_safetensors_load_split: OpenMP device 0 is not served by an offload-io plugin: libomptarget loaded {{.*}}/libomptarget.rtl.x86_64{{(.nextgen)?}}.so, not offload-io's. {{.*}} (tensor 'w' of {{.*}}.st was to be loaded there)
// CHECK: PASS: no placement
// CHECK: PASS: map onto device 0 -> -1 ENODEV
// CHECK: PASS: the initial device loads
// CHECK: PASS: its bytes in host memory
// CHECK-NOT: FAIL
// CHECK: failures: 0

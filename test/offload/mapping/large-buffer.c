// Large mappings (well above any small-allocation pool): 8 MiB in and out,
// plus many odd sizes.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "offload_test.h"

int main(void) {
  size_t n = (8u << 20) / sizeof(unsigned);
  unsigned *buf = malloc(n * sizeof(unsigned));
  for (size_t i = 0; i < n; ++i)
    buf[i] = (unsigned)i;
#pragma omp target teams distribute parallel for map(tofrom : buf[0 : n])
  for (size_t i = 0; i < n; ++i)
    buf[i] = buf[i] * 3u + 1u;
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i)
    bad += buf[i] != (unsigned)i * 3u + 1u;
  OT_EXPECT(bad == 0, "8 MiB buffer round trip");
  free(buf);

  // Sizes around small-allocation boundaries.
  static const int sizes[] = {1, 3, 4, 5, 63, 64, 65, 1023, 1024, 1025,
                              4095, 4096, 4097, 8191, 8192, 8193, 65537};
  int all_ok = 1;
  for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
    int len = sizes[s];
    unsigned char *p = malloc(len);
    memset(p, 0x11, len);
#pragma omp target map(tofrom : p[0 : len])
    for (int i = 0; i < len; ++i)
      p[i] = (unsigned char)(p[i] + i);
    for (int i = 0; i < len; ++i)
      if (p[i] != (unsigned char)(0x11 + i)) {
        all_ok = 0;
        printf("size %d: byte %d wrong\n", len, i);
        break;
      }
    free(p);
  }
  OT_EXPECT(all_ok, "odd sizes round trip");
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: 8 MiB buffer round trip
// CHECK: PASS: odd sizes round trip
// CHECK-NOT: FAIL
// CHECK: failures: 0

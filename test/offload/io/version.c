// The version macros of ompx_version.h and ompx_io_version() agree: the
// headers and the library come from one build, and both follow the project
// version. ompx_io_version fills each part it is given a pointer for.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic | %fcheck-generic

#include <stdio.h>
#include <string.h>
#include "offload_test.h"
#include "ompx_io.h"
#include "ompx_version.h"

int main(void) {
  int Major = -1, Minor = -1, Patch = -1;
  const char *V = ompx_io_version(&Major, &Minor, &Patch);
  printf("headers %s, library %s\n", OFFLOADIO_VERSION_STRING, V);
  OT_EXPECT(V && !strcmp(V, OFFLOADIO_VERSION_STRING),
            "the library's version string is the headers'");
  OT_EXPECT(Major == OFFLOADIO_VERSION_MAJOR &&
                Minor == OFFLOADIO_VERSION_MINOR &&
                Patch == OFFLOADIO_VERSION_PATCH,
            "the library's parts are the headers' parts");
  char Joined[64];
  snprintf(Joined, sizeof Joined, "%d.%d.%d", Major, Minor, Patch);
  OT_EXPECT(!strcmp(Joined, V), "the string is MAJOR.MINOR.PATCH");
  OT_EXPECT(OFFLOADIO_VERSION == Major * 10000 + Minor * 100 + Patch,
            "OFFLOADIO_VERSION orders the parts");
  OT_EXPECT(ompx_io_version(NULL, NULL, NULL) == V,
            "the parts are optional");
  OT_SUMMARY();
  return 0;
}

// CHECK: headers [[V:[0-9]+\.[0-9]+\.[0-9]+]], library [[V]]
// CHECK: PASS: the library's version string is the headers'
// CHECK: PASS: the library's parts are the headers' parts
// CHECK: PASS: the string is MAJOR.MINOR.PATCH
// CHECK: PASS: OFFLOADIO_VERSION orders the parts
// CHECK: PASS: the parts are optional
// CHECK-NOT: FAIL
// CHECK: failures: 0

// SPDX-License-Identifier: Apache-2.0
//
// Small helpers shared by the offload-io lit tests (test/offload).
// Every check prints one line, "PASS: <what>" or "FAIL: <what>", and
// OT_SUMMARY() prints "failures: <n>"; tests CHECK for the PASS lines they
// expect, for "failures: 0", and CHECK-NOT for FAIL.

#ifndef OFFLOADIO_TEST_SUPPORT_OFFLOAD_TEST_H
#define OFFLOADIO_TEST_SUPPORT_OFFLOAD_TEST_H

#include <stdio.h>

static int ot_failures = 0;

#define OT_EXPECT(cond, ...)                                                   \
  do {                                                                         \
    int ot_ok_ = (cond) ? 1 : 0;                                               \
    if (!ot_ok_)                                                               \
      ++ot_failures;                                                           \
    printf("%s: ", ot_ok_ ? "PASS" : "FAIL");                                  \
    printf(__VA_ARGS__);                                                       \
    printf("\n");                                                              \
  } while (0)

#define OT_SUMMARY() printf("failures: %d\n", ot_failures)

#endif

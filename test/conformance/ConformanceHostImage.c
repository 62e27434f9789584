// SPDX-License-Identifier: Apache-2.0
//
// The x86_64 device image of the conformance suite's load-and-launch case
// (ConformanceImageTest.cpp): a shared object with one kernel and one
// global, as clang makes for the host target, loaded by the host plugin
// from its bytes.
#define CONFORMANCE_EXPORT __attribute__((visibility("default")))

/// Read and written by the case through the global's device address.
CONFORMANCE_EXPORT int conformance_global = 0x5eed;

/// The first argument the last launch passed: the case's own first
/// argument, or libomptarget 18's launch environment before it.
CONFORMANCE_EXPORT void *conformance_first_arg;

/// The kernel: launched with the arguments (Out, Out), it copies the global
/// into *Out. Under libomptarget 18 the launch environment comes first, so
/// the kernel sees (environment, Out) and *Out is written either way.
CONFORMANCE_EXPORT void conformance_store(void *First, int *Out) {
  conformance_first_arg = First;
  *Out = conformance_global;
}

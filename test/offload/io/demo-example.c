// The README's demo (examples/demo.c) on the lit target: every step
// passes, and the file read is reported twice, the first into fresh device
// memory (with its first touch) and then the transfer alone.
//
// REQUIRES: x86_64-pc-linux-gnu
// RUN: %clang-generic %S/../../../examples/demo.c -o %t
// RUN: %libomptarget-run-generic | %fcheck-generic

// CHECK: == sub-buffer lock inside the region: device pointer = region + offset
// CHECK: == overlapping lock: refused
// CHECK: == file -> device, first read into fresh device memory: {{[0-9.]+}} GB/s (includes the first touch of its pages)
// CHECK-NEXT: == file -> device: 268435456 bytes by the {{[a-z]+}} path at {{[0-9.]+}} GB/s (page-cached file, device memory touched before); sum on the device correct
// CHECK: == demo passed

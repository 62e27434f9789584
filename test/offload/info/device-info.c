// llvm-omp-device-info (run with lit's LD_LIBRARY_PATH, so it loads the
// offload-io plugin) must not crash, and prints for every host-plugin device
// a line containing "offload-io plugin:" followed by "x86_64".
// (The stock LLVM 16 nextgen x86_64 plugin crashes here.)
//
// REQUIRES: host-plugin
// RUN: env OFFLOADIO_HOST_NUM_DEVICES=3 %run-env %llvm-tools-dir/llvm-omp-device-info \
// RUN:   | %fcheck-generic --check-prefix=THREE
// RUN: env -u OFFLOADIO_HOST_NUM_DEVICES %run-env %llvm-tools-dir/llvm-omp-device-info \
// RUN:   | %fcheck-generic --check-prefix=DEFAULT

// THREE: Device (0):
// THREE: offload-io plugin:{{.*}}x86_64
// THREE: Device (1):
// THREE: offload-io plugin:{{.*}}x86_64
// THREE: Device (2):
// THREE: offload-io plugin:{{.*}}x86_64
// THREE-NOT: offload-io plugin:{{.*}}x86_64

// DEFAULT-COUNT-4: offload-io plugin:{{.*}}x86_64
// DEFAULT-NOT: offload-io plugin:{{.*}}x86_64

// ompx-io bench --direct (disk mode): the transfers and the baselines open
// the file with O_DIRECT, the output says so, and sizes that O_DIRECT
// cannot take, or a malloc'd baseline buffer, are refused up front. Where
// the test directory's file system refuses O_DIRECT the run fails naming
// it; the test then stops at that line.
//
// REQUIRES: ompx-io-tool
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: %ompx-io bench --direct --dir %t.dir --sizes 64K --threads 1 \
// RUN:   --paths direct,staged --repeat 1 --no-naive 2>&1 | FileCheck %s
// RUN: %not %ompx-io bench --direct --sizes 1000 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SIZE
// RUN: %not %ompx-io bench --direct --baseline-buffer malloc 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MALLOC

// CHECK: NOTE: disk mode (--direct): every transfer and baseline opens the file with O_DIRECT
// CHECK: baselines: plain pread (O_DIRECT) into a page-aligned host buffer
// CHECK: read   pread-1t         64 KiB       1
// CHECK: read   direct           64 KiB       1
// CHECK: read   staged           64 KiB       1

// SIZE: ompx-io: error: bench: --sizes: '1000' is no multiple of 4 KiB, which --direct (O_DIRECT) needs
// MALLOC: ompx-io: error: bench: --direct takes page-aligned baseline buffers, not --baseline-buffer malloc

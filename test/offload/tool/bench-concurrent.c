// Two ompx-io bench runs at once in one directory: each creates a test file
// of its own (mkstemp), so neither removes the other's, both succeed, and
// both files are gone afterwards. Without --plot nothing is plotted.
//
// REQUIRES: ompx-io-tool
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: bash %S/Inputs/two-benches.sh %t.dir %t.out %ompx-io bench \
// RUN:   --sizes 64K --threads 1 --paths direct --repeat 1 --no-naive \
// RUN:   | FileCheck %s
// RUN: FileCheck %s --check-prefix=OUT < %t.out.1
// RUN: FileCheck %s --check-prefix=OUT < %t.out.2

// CHECK-NOT: failed
// CHECK: left in dir: []

// OUT: creating {{.*}}.dir/ompx-io-bench.{{[A-Za-z0-9]+}} (65536 bytes)
// OUT-NOT: wrote
// OUT: file: {{.*}}.dir/ompx-io-bench.{{[A-Za-z0-9]+}}, 64 KiB, created for this run
// OUT: read   direct

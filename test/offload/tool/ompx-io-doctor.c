// ompx-io doctor: the plugins a program linked as ompx-io gets and whose
// each device is, the locked-memory limit, each device's fastpath and why
// not, and whether the paths given take O_DIRECT; exit status 1 when no
// device is ours or a path cannot be opened with O_DIRECT.
// No program is compiled: the RUN lines drive the tool.
//
// REQUIRES: ompx-io-tool
// RUN: rm -rf %t.dir && mkdir -p %t.dir && echo data > %t.dir/file
// RUN: %ompx-io doctor %t.dir %t.dir/file | FileCheck %s
// RUN: %not %ompx-io doctor %t.dir/missing | FileCheck %s --check-prefix=MISSING
// RUN: env LD_LIBRARY_PATH=%stock-ld-path %not %ompx-io doctor 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=STOCK
// RUN: %not %ompx-io doctor --bogus 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: %ompx-io doctor --help | FileCheck %s --check-prefix=HELP

// CHECK: Plugins loaded:
// CHECK: libomptarget.rtl.x86_64{{.*}} (offload-io)
// CHECK: Devices ({{[0-9]+}}):
// CHECK-NEXT: 0: offload-io x86_64 plugin; no vendor storage fastpath: the x86_64 plugin has no vendor storage DMA
// CHECK: Locked memory (RLIMIT_MEMLOCK, ulimit -l): {{.*}}
// CHECK: O_DIRECT (the direct and fastpath reads of disks need it):
// CHECK-NEXT: {{.*}}.dir ({{.*}}): O_DIRECT {{ok|refused}}
// CHECK-NEXT: {{.*}}.dir/file ({{.*}}): O_DIRECT {{ok|refused}}

// MISSING: {{.*}}/missing: cannot stat: No such file or directory

// STOCK: 0: a stock plugin's: ompx_io calls fail with ENODEV
// STOCK: none is served by offload-io: link the installed libompx_io

// BAD: ompx-io: error: doctor: unexpected option '--bogus'

// HELP: Usage: ompx-io doctor [PATH...]

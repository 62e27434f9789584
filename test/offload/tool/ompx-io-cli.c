// The ompx-io command line: --version, info (text and --json, and its exit
// status when no device is served by an offload-io plugin), bench's help.
// No program is compiled: the RUN lines drive the installed tool.
//
// REQUIRES: ompx-io-tool
// RUN: %ompx-io --version | FileCheck %s --check-prefix=VERSION
// RUN: %ompx-io info | FileCheck %s %plugin-suffix-def --check-prefix=INFO
// RUN: %ompx-io info --json > %t.json
// RUN: python3 %S/Inputs/check-info-json.py %t.json served \
// RUN:   %S/../../../docs/ompx-io-json.md | FileCheck %s --check-prefix=JSON
// With only the stock plugins: exit status 1, the note says what to do.
// RUN: env LD_LIBRARY_PATH=%stock-ld-path %not %ompx-io info 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=STOCK,STOCK-LLVM%llvm-abi
// RUN: env LD_LIBRARY_PATH=%stock-ld-path %not %ompx-io info --json \
// RUN:   > %t.stock.json
// RUN: python3 %S/Inputs/check-info-json.py %t.stock.json unserved \
// RUN:   %S/../../../docs/ompx-io-json.md | FileCheck %s --check-prefix=JSON
// RUN: %not %ompx-io info --bogus 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: %ompx-io info --help | FileCheck %s --check-prefix=INFO-HELP
// RUN: %ompx-io bench --help | FileCheck %s --check-prefix=BENCH-HELP
// RUN: %not %ompx-io bench --file %t.json --dir /tmp 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FILE-DIR

// VERSION: ompx-io [[V:[0-9]+\.[0-9]+\.[0-9]+]] (libompx_io [[V]])
// VERSION-NEXT: offload targets: x86_64-pc-linux-gnu

// INFO: Offload plugins loaded:
// INFO: libomptarget.rtl.x86_64[[PLUGIN_SUFFIX]].so (offload-io)
// INFO: Device 0: offload-io x86_64 plugin, its device 0
// INFO: kernel launch: ok
// INFO: Settings (every layer's
// INFO: [plugin]
// INFO: LIBOMPTARGET_INFO
// INFO: [io-engine]
// INFO: OMPX_IO_THREADS
// INFO: [amdgpu]
// INFO: LIBOMPTARGET_AMDGPU_AIS_ANY_FILESYSTEM off (default)
// INFO-NEXT: let the AIS fastpath try file systems not verified for it
// INFO-NOT: Note: no device

// JSON: info-json: ok

// STOCK-LLVM16: libomptarget.rtl.x86_64{{(.nextgen)?}}.so{{(.16)?}} (stock, no ompx_io support)
// STOCK-LLVM17: libomptarget.rtl.x86_64.so{{(.17)?}} (stock, no ompx_io support)
// STOCK-LLVM18: libomptarget.rtl.x86_64.so{{(.18.1)?}} (stock, no ompx_io support)
// STOCK: Device 0: not an offload-io plugin's device
// STOCK: Note: no device is served by an offload-io plugin, so ompx_io calls fail with ENODEV.
// STOCK-NEXT: The installed ompx-io loads the plugins of its prefix; a build tree's does not: put its lib/ first in LD_LIBRARY_PATH (install.md in <prefix>/share/doc/offload-io).

// BAD: info: unexpected argument '--bogus'

// INFO-HELP: Usage: ompx-io info [--json]
// INFO-HELP: Exits 1 when no device is

// BENCH-HELP: --dir DIR
// BENCH-HELP: --plot FILE
// BENCH-HELP: nothing is plotted without it
// BENCH-HELP: OFFLOADIO_TOOL_TARGETS

// FILE-DIR: --dir is for the run's own file; --file names one

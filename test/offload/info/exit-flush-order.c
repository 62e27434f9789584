// When the plugin waits for its work at exit, shown by the profile
// (OFFLOADIO_PROFILE), which that flush prints. libomptarget 16 and 17 ask
// for it at deinit_plugin (below). libomptarget 18 does not, and the
// plugin flushes from an exit handler of its own, registered when a device
// is initialised (which 18 does when the image is registered, in a
// constructor), so that it runs before the exit handlers registered
// earlier (exit handlers run in the reverse order of their registration):
// a vendor driver tears itself down from such a handler (CUDA's,
// registered when it starts), after which nothing is left to wait for.
// The handler registered from the program's .preinit_array, before any
// constructor of the program and after the C library registered its own
// exit processing, stands for the driver's: a flush from the plugin's
// destructor alone would come after it.
//
// RUN: %libomptarget-compile-generic
// RUN: env OFFLOADIO_PROFILE=1 %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic -check-prefix=ABI%llvm-abi -DPLUGIN=%plugin-name

#include <stdio.h>
#include <stdlib.h>

static void registeredEarly(void) { fprintf(stderr, "handler early\n"); }

static void registerEarly(void) {
  if (atexit(registeredEarly))
    abort();
}

__attribute__((section(".preinit_array"), used)) static void (*const
    RegisterEarly)(void) = registerEarly;

static void registeredBefore(void) { fprintf(stderr, "handler before\n"); }
static void registeredAfter(void) { fprintf(stderr, "handler after\n"); }

int main(void) {
  if (atexit(registeredBefore))
    return 1;
  int Ran = 0;
#pragma omp target map(tofrom : Ran)
  Ran = 1;
  if (atexit(registeredAfter))
    return 1;
  fprintf(stderr, "ran %d\n", Ran);
  return Ran ? 0 : 1;
}

// libomptarget 16 calls deinit_plugin after every exit handler (from its
// destructor): a driver that tore itself down by then leaves the flush
// nothing to wait for, and it is quiet (TeardownTy).
// ABI16: ran 1
// ABI16-NEXT: handler after
// ABI16-NEXT: handler before
// ABI16-NEXT: handler early
// ABI16-NEXT: offload-io([[PLUGIN]])[{{[0-9]+}}]: profile: entry point or stage, calls, total ms, mean us
// ABI16: offload-io([[PLUGIN]])[{{[0-9]+}}]: profile: launch_kernel 1 {{[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$}}

// libomptarget 17 calls deinit_plugin too, at its own time.
// ABI17: ran 1
// ABI17-NEXT: handler after
// ABI17-NEXT: handler before
// ABI17-DAG: handler early
// ABI17-DAG: offload-io([[PLUGIN]])[{{[0-9]+}}]: profile: entry point or stage, calls, total ms, mean us

// ABI18: ran 1
// ABI18-NEXT: handler after
// ABI18-NEXT: handler before
// ABI18-NEXT: offload-io([[PLUGIN]])[{{[0-9]+}}]: profile: entry point or stage, calls, total ms, mean us
// ABI18: offload-io([[PLUGIN]])[{{[0-9]+}}]: profile: launch_kernel 1 {{[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$}}
// ABI18: handler early

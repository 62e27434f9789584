// Kernels cannot run on the HSA emulation: a target region must fail with a
// clear message and never hang, whether the emulated queue completes the
// failed packet's signal with -1 (default) or, like ROCr, dies and never
// completes it (HSA_EMU_QUEUE_ERRORS=stop), and whether the region is
// synchronous or nowait.  With HSA_EMU_DISPATCH=noop the dispatch completes
// without running, and HSA_EMU_TRACE shows the packet and the kernel
// arguments the plugin wrote: explicit arguments at their metadata offsets
// (a pointer, then a firstprivate scalar by value) and the code object v4
// hidden arguments clang-16 emits, all zero; under libomptarget 18 the
// launch environment first and clang-18's code object v5 hidden block, whose
// geometry (the emulation checks it against the packet) the device runtime
// reads.
//
// REQUIRES: hsa-emulation
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-fail-generic 2>&1 | %fcheck-generic
// RUN: env HSA_EMU_QUEUE_ERRORS=stop %libomptarget-run-fail-generic 2>&1 | %fcheck-generic --check-prefix=STOP
// RUN: env NOWAIT=1 %libomptarget-run-fail-generic 2>&1 | %fcheck-generic --check-prefix=NOWAIT
// RUN: env NOWAIT=1 HSA_EMU_QUEUE_ERRORS=stop %libomptarget-run-fail-generic 2>&1 | %fcheck-generic --check-prefix=NOWAIT-STOP
// RUN: env HSA_EMU_DISPATCH=noop HSA_EMU_TRACE=1 %libomptarget-run-generic 2>&1 | %fcheck-generic --check-prefix=%if llvm-18 %{TRACE18%} %else %{TRACE%}
//
// LLVM 16's own amdgpu plugin (test/hsa-emu/README.md, "The stock plugin on
// the emulation") writes the same packet and kernel arguments; on the
// failed dispatch it aborts in its queue error callback instead of failing
// the target construct, so the program ends by abort either way.
// RUN: env HSA_EMU_DISPATCH=noop HSA_EMU_TRACE=1 %run-stock-generic 2>&1 | %fcheck-generic --check-prefix=%if llvm-18 %{TRACE18%} %else %{TRACE%}
// RUN: %not --crash %run-stock-generic 2>&1 | %fcheck-generic --check-prefix=STOCK
// RUN: env NOWAIT=1 %not --crash %run-stock-generic 2>&1 | %fcheck-generic --check-prefix=STOCK

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int x = 1, scalar = 0x5a5a;
  printf("before the target region\n");
  fflush(stdout);
  if (getenv("NOWAIT")) {
#pragma omp target teams num_teams(3) thread_limit(64) map(tofrom : x) firstprivate(scalar) nowait
    x += scalar;
#pragma omp taskwait
  } else {
#pragma omp target teams num_teams(3) thread_limit(64) map(tofrom : x) firstprivate(scalar)
    x += scalar;
  }
  // Only reached when dispatches are no-ops: the kernel did not run.
  printf("after the target region: x = %d\n", x);
  return 0;
}

// CHECK: before the target region
// CHECK: hsa-emu: GPU 0 queue {{[0-9]+}}: kernel dispatch of __omp_offloading_{{.*}} is not supported by the HSA emulation
// The emulation calls the queue's error callback before it completes the
// failed packet's signal with -1, so the plugin may see either first.
// CHECK: offload-io(amdgpu)[{{[0-9]+}}] device 0: error: synchronize: kernel __omp_offloading_{{.*}} on device 0 {{failed \(completion signal -1\)|can never complete}}: the HSA queue of device 0 reported an error: HSA_STATUS_ERROR_INVALID_PACKET_FORMAT
// CHECK: failure of target construct while offloading is mandatory
// CHECK-NOT: after the target region

// STOP: before the target region
// STOP: kernel dispatch of __omp_offloading_{{.*}} is not supported
// STOP: offload-io(amdgpu)[{{[0-9]+}}] device 0: error: synchronize: kernel __omp_offloading_{{.*}} on device 0 can never complete: the HSA queue of device 0 reported an error
// STOP: failure of target construct while offloading is mandatory

// NOWAIT: before the target region
// NOWAIT: offload-io(amdgpu)[{{[0-9]+}}] device 0: error: {{synchronize|query_async}}: kernel __omp_offloading_{{.*}} {{failed \(completion signal -1\)|can never complete}}
// NOWAIT-NOT: after the target region

// NOWAIT-STOP: before the target region
// NOWAIT-STOP: offload-io(amdgpu)[{{[0-9]+}}] device 0: error: {{synchronize|query_async}}: kernel __omp_offloading_{{.*}} can never complete
// NOWAIT-STOP-NOT: after the target region

// TRACE: before the target region
// A generic-mode kernel (a teams region without a parallel one): three teams
// of thread_limit(64) plus one wavefront for the main thread, as
// libomptarget 16's AMDGPU plugin launches it.
// TRACE: hsa-emu: dispatch __omp_offloading_{{.*}} on GPU 0: dims 1 grid [384,1,1] workgroup [128,1,1] group_segment {{[0-9]+}} private_segment {{[0-9]+}} kernarg {{[0-9]+}} bytes
// TRACE-NEXT: hsa-emu:   arg 0 global_buffer offset 0 size 8 = 0x{{[0-9a-f]+}}
// TRACE-NEXT: hsa-emu:   arg 1 by_value offset 8 size 8 = 0x{{([0-9a-f]*0000)?}}5a5a
// TRACE-NEXT: hsa-emu:   arg 2 hidden_global_offset_x offset 16 size 8 = 0
// TRACE-NEXT: hsa-emu:   arg 3 hidden_global_offset_y offset 24 size 8 = 0
// TRACE-NEXT: hsa-emu:   arg 4 hidden_global_offset_z offset 32 size 8 = 0
// TRACE-NEXT: hsa-emu:   arg 5 hidden_hostcall_buffer offset 40 size 8 = 0
// TRACE-NEXT: hsa-emu:   arg 6 hidden_default_queue offset 48 size 8 = 0
// TRACE-NEXT: hsa-emu:   arg 7 hidden_none offset 56 size 8 = 0
// TRACE-NEXT: hsa-emu:   arg 8 hidden_multigrid_sync_arg offset 64 size 8 = 0
// TRACE: after the target region: x = 1

// Libomptarget 18: three teams of thread_limit(64) (the clause caps the
// kernel's threads, no extra wavefront), the launch environment's sentinel,
// then the program's arguments and the v5 hidden block. The queue pointer
// is ours alone (the stock plugin leaves it 0).
// TRACE18: before the target region
// TRACE18: hsa-emu: dispatch __omp_offloading_{{.*}} on GPU 0: dims 1 grid [192,1,1] workgroup [64,1,1] group_segment {{[0-9]+}} private_segment {{[0-9]+}} kernarg {{[0-9]+}} bytes
// TRACE18-NEXT: hsa-emu:   arg 0 global_buffer offset 0 size 8 = 0xffffffffffffffff
// TRACE18-NEXT: hsa-emu:   arg 1 global_buffer offset 8 size 8 = 0x{{[0-9a-f]+}}
// TRACE18-NEXT: hsa-emu:   arg 2 by_value offset 16 size 8 = 0x{{([0-9a-f]*0000)?}}5a5a
// TRACE18-NEXT: hsa-emu:   arg 3 hidden_block_count_x offset 24 size 4 = 3
// TRACE18-NEXT: hsa-emu:   arg 4 hidden_block_count_y offset 28 size 4 = 1
// TRACE18-NEXT: hsa-emu:   arg 5 hidden_block_count_z offset 32 size 4 = 1
// TRACE18-NEXT: hsa-emu:   arg 6 hidden_group_size_x offset 36 size 2 = 64
// TRACE18-NEXT: hsa-emu:   arg 7 hidden_group_size_y offset 38 size 2 = 1
// TRACE18-NEXT: hsa-emu:   arg 8 hidden_group_size_z offset 40 size 2 = 1
// TRACE18-NEXT: hsa-emu:   arg 9 hidden_remainder_x offset 42 size 2 = 0
// TRACE18-NEXT: hsa-emu:   arg 10 hidden_remainder_y offset 44 size 2 = 0
// TRACE18-NEXT: hsa-emu:   arg 11 hidden_remainder_z offset 46 size 2 = 0
// TRACE18-NEXT: hsa-emu:   arg 12 hidden_global_offset_x offset 64 size 8 = 0
// TRACE18-NEXT: hsa-emu:   arg 13 hidden_global_offset_y offset 72 size 8 = 0
// TRACE18-NEXT: hsa-emu:   arg 14 hidden_global_offset_z offset 80 size 8 = 0
// TRACE18-NEXT: hsa-emu:   arg 15 hidden_grid_dims offset 88 size 2 = 1
// TRACE18-NEXT: hsa-emu:   arg 16 hidden_hostcall_buffer offset 104 size 8 = 0
// TRACE18-NEXT: hsa-emu:   arg 17 hidden_multigrid_sync_arg offset 112 size 8 = 0
// TRACE18-NEXT: hsa-emu:   arg 18 hidden_heap_v1 offset 120 size 8 = 0
// TRACE18-NEXT: hsa-emu:   arg 19 hidden_default_queue offset 128 size 8 = 0
// TRACE18-NEXT: hsa-emu:   arg 20 hidden_completion_action offset 136 size 8 = 0
// TRACE18-NEXT: hsa-emu:   arg 21 hidden_queue_ptr offset 224 size 8 = {{[0-9]+}}
// TRACE18: after the target region: x = 1

// STOCK: before the target region
// STOCK: hsa-emu: GPU 0 queue {{[0-9]+}}: kernel dispatch of __omp_offloading_{{.*}} is not supported by the HSA emulation
// STOCK: AMDGPU fatal error 1:{{ ?}}Received error in queue {{.*}}: HSA_STATUS_ERROR_INVALID_PACKET_FORMAT
// STOCK-NOT: after the target region

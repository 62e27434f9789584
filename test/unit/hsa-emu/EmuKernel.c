// SPDX-License-Identifier: Apache-2.0
//
// A gfx90a code object for HSAEmuStockCallsTest and HSAEmuDispatchTest,
// built by test/unit's CMake with clang for amdgcn-amd-amdhsa: one kernel
// and one initialised global, both exported. Never run (the emulation runs
// no GPU code).
__attribute__((amdgpu_kernel, visibility("default"))) void emu_kernel(int *Out) {
  // The work-group size: code object v5 reads it from the hidden arguments
  // (HSAEmuDispatchTest), v4 from the dispatch packet.
  if (Out)
    *Out = __builtin_amdgcn_workgroup_size_x();
}
__attribute__((visibility("default"))) int EmuGlobal[4] = {1, 2, 3, 4};

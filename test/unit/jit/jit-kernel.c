// SPDX-License-Identifier: Apache-2.0
//
// The module the JIT's unit tests compile (JITCompilerTest.cpp), built at
// test time for nvptx64 and amdgcn by the build's clang. JIT_FUNCTION
// names the function, so that a replacement module is told apart.
#ifndef JIT_FUNCTION
#define JIT_FUNCTION jit_test_store
#endif

__attribute__((visibility("default"))) void JIT_FUNCTION(int *P, int V) {
  for (int I = 0; I < 4; ++I)
    P[I] = V + I;
}

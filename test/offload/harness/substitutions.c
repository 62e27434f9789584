// The lit substitutions behave like upstream libomptarget's: the per-triple
// forms compile for the current target and are ignored (echo) for the
// others, and bare FileCheck / %FileCheck reach the LLVM tool.
//
// RUN: %clang-generic -DVALUE=7 %s -o %t && %libomptarget-run-generic | FileCheck %s
// RUN: %libomptarget-compile-and-run-generic | %FileCheck %s --check-prefix=DEFAULT
// RUN: %libomptarget-compile-x86_64-pc-linux-gnu
// RUN: %libomptarget-compile-nvptx64-nvidia-cuda
// RUN: %libomptarget-compile-amdgcn-amd-amdhsa
// RUN: %libomptarget-run-generic | %fcheck-generic --check-prefix=DEFAULT
// RUN: echo %plugin-name | FileCheck %s --check-prefix=NAME

#include <omp.h>
#include <stdio.h>

#ifndef VALUE
#define VALUE 1
#endif

int main(void) {
  int v = 0;
#pragma omp target map(from : v)
  v = VALUE * 6 + !omp_is_initial_device();
  printf("v = %d\n", v);
  return 0;
}

// CHECK: v = 43
// DEFAULT: v = 7
// NAME: {{^(x86_64|cuda|amdgpu)$}}

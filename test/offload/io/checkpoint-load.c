// The checkpoint example loads a safetensors file that Python wrote
// (mixed dtypes and ranks, an empty tensor, an escaped name) into device
// memory with one batch and checks every byte against the file and the
// generator. No kernel runs, so this test also runs on the HSA emulation.
//
// REQUIRES: checkpoint-example
// RUN: %clang-generic %checkpoint-link -o %t
// RUN: python3 %S/Inputs/safetensors-files.py make %t.st 5
// RUN: %libomptarget-run-generic info %t.st | FileCheck %s --check-prefix=INFO
// RUN: %libomptarget-run-generic load %t.st | FileCheck %s
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic load %t.st \
// RUN:   | FileCheck %s
// A tensor named twice, each entry valid: the last entry counts, as in the
// reference implementation.
// RUN: python3 %S/Inputs/safetensors-files.py duplicates %t.dup
// RUN: %libomptarget-run-generic info %t.dup | FileCheck %s --check-prefix=DUP-INFO
// RUN: %libomptarget-run-generic load %t.dup | FileCheck %s --check-prefix=DUP

// DUP-INFO: 2 tensors, header {{[0-9]+}} bytes, data section at offset {{[0-9]+}}, 24 bytes
// DUP-INFO-NEXT: b F32 [2] [0, 8)
// DUP-INFO-NEXT: a F16 [2, 4] [8, 24)
// DUP: loaded 2 tensors, 24 bytes, into device {{[0-9]+}} in one batch
// DUP-NEXT: verified 24 bytes against the file

// INFO: 5 tensors, header {{[0-9]+}} bytes, data section at offset {{[0-9]+}}, 18257 bytes
// INFO: embed F32 [97, 33] [0, 12804)
// INFO-NEXT: norm "q" BF16 [257] [12804, 13318)
// INFO-NEXT: empty I64 [0, 3] [13318, 13318)
// INFO-NEXT: head.w U8 [4099] [13318, 17417)
// INFO-NEXT: head.b F64 [5, 7, 3] [17417, 18257)
// CHECK: loaded 5 tensors, 18257 bytes, into device {{[0-9]+}} in one batch
// CHECK-NEXT: verified 18257 bytes against the file and the generator

// The checkpoint example loads a safetensors file that Python wrote
// (mixed dtypes and ranks, an empty tensor, an escaped name) into device
// memory with one batch and checks every byte against the file and the
// generator. No kernel runs, so this test also runs on the HSA emulation.
//
// REQUIRES: checkpoint-example
// RUN: %clang-generic %checkpoint-link -o %t
// RUN: python3 %S/Inputs/safetensors-files.py make %t.st 5
// RUN: %libomptarget-run-generic info %t.st | FileCheck %s --check-prefix=INFO
// RUN: %libomptarget-run-generic load %t.st --verify | FileCheck %s
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic load %t.st --verify \
// RUN:   | FileCheck %s
// Without --verify: the per-file and total rates, no verification.
// RUN: %libomptarget-run-generic load %t.st | FileCheck %s --check-prefix=NOVERIFY
// A sharded checkpoint through its index: every dtype, two shards, a line
// per file.
// RUN: rm -rf %t.sharded && mkdir -p %t.sharded
// RUN: python3 %S/Inputs/safetensors-files.py sharded %t.sharded 3
// RUN: %libomptarget-run-generic info %t.sharded/model.safetensors.index.json | FileCheck %s --check-prefix=SHARD-INFO
// RUN: %libomptarget-run-generic load %t.sharded/model.safetensors.index.json --verify | FileCheck %s --check-prefix=SHARDED
// A tensor named twice, each entry valid: the last entry counts, as in the
// reference implementation.
// RUN: python3 %S/Inputs/safetensors-files.py duplicates %t.dup
// RUN: %libomptarget-run-generic info %t.dup | FileCheck %s --check-prefix=DUP-INFO
// RUN: %libomptarget-run-generic load %t.dup --verify | FileCheck %s --check-prefix=DUP

// DUP-INFO: 2 tensors, header {{[0-9]+}} bytes, data section at offset {{[0-9]+}}, 24 bytes
// DUP-INFO-NEXT: b F32 [2] [0, 8)
// DUP-INFO-NEXT: a F16 [2, 4] [8, 24)
// DUP: loaded 2 tensors, 24 bytes, from 1 file into device {{[0-9]+}}: {{[0-9.]+}} s, {{[0-9.]+}} GB/s
// DUP-NEXT: verified 24 bytes against the file

// NOVERIFY: {{.*}}.st: 5 tensors, 18257 bytes in one batch, {{[0-9.]+}} s, {{[0-9.]+}} GB/s
// NOVERIFY-NEXT: loaded 5 tensors, 18257 bytes, from 1 file into device {{[0-9]+}}: {{[0-9.]+}} s, {{[0-9.]+}} GB/s
// NOVERIFY-NOT: verified

// SHARD-INFO: model-00001-of-00002.safetensors: 8 tensors
// SHARD-INFO: layers.2.I8 I8 [3, 3]
// SHARD-INFO: model-00002-of-00002.safetensors: 7 tensors
// SHARD-INFO: layers.5.U16 U16 [6, 3]
// SHARDED: model-00001-of-00002.safetensors: 8 tensors, {{[0-9]+}} bytes in one batch
// SHARDED-NEXT: model-00002-of-00002.safetensors: 7 tensors, {{[0-9]+}} bytes in one batch
// SHARDED-NEXT: loaded 15 tensors, {{[0-9]+}} bytes, from 2 files into device {{[0-9]+}}: {{[0-9.]+}} s, {{[0-9.]+}} GB/s
// SHARDED-NEXT: verified {{[0-9]+}} bytes against the files and the generator

// INFO: 5 tensors, header {{[0-9]+}} bytes, data section at offset {{[0-9]+}}, 18257 bytes
// INFO: embed F32 [97, 33] [0, 12804)
// INFO-NEXT: norm "q" BF16 [257] [12804, 13318)
// INFO-NEXT: empty I64 [0, 3] [13318, 13318)
// INFO-NEXT: head.w U8 [4099] [13318, 17417)
// INFO-NEXT: head.b F64 [5, 7, 3] [17417, 18257)
// CHECK: loaded 5 tensors, 18257 bytes, from 1 file into device {{[0-9]+}}: {{[0-9.]+}} s, {{[0-9.]+}} GB/s
// CHECK-NEXT: verified 18257 bytes against the file and the generator

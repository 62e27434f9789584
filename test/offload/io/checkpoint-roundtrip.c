// The checkpoint example (examples/checkpoint), built for the lit target:
// save writes tensors generated in device memory with one batch; Python's
// json and the generator recomputed in Python check the file's header,
// layout and every byte; load reads it into device memory with one batch
// and checks every byte against the file and the generator, on the default
// path and on the staged one; a file changed in one byte fails the load,
// naming the tensor and the byte.
//
// REQUIRES: checkpoint-example
// The save fills its tensors with a kernel, which the HSA emulation does not
// run (checkpoint-load.c loads there).
// UNSUPPORTED: hsa-emulation
// RUN: %clang-generic %checkpoint-link -o %t
// RUN: rm -f %t.st
// RUN: %libomptarget-run-generic save %t.st --tensors 24 --max-bytes 64K \
// RUN:   --seed 11 | FileCheck %s --check-prefix=SAVE
// RUN: python3 %S/Inputs/safetensors-files.py check %t.st 11 \
// RUN:   | FileCheck %s --check-prefix=CHECK-FILE
// RUN: %libomptarget-run-generic info %t.st | FileCheck %s --check-prefix=INFO
// RUN: %libomptarget-run-generic load %t.st --verify | FileCheck %s --check-prefix=LOAD
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K \
// RUN:   %libomptarget-run-generic load %t.st --verify | FileCheck %s --check-prefix=LOAD
// RUN: python3 %S/Inputs/safetensors-files.py flip %t.st
// RUN: %not %libomptarget-run-generic load %t.st --verify 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CHANGED

// SAVE: saved 24 tensors, [[BYTES:[0-9]+]] bytes of data at offset {{[0-9]+}}, from device {{[0-9]+}} to {{.*}}.st in one batch
// CHECK-FILE: checked 24 tensors, {{[0-9]+}} bytes
// INFO: .st: 24 tensors, header {{[0-9]+}} bytes, data section at offset {{[0-9]+}}
// INFO: metadata offloadio.generator = splitmix64-v1
// INFO: metadata offloadio.seed = 11
// INFO: layers.0.weight {{[A-Z0-9_]+}} [{{[0-9, ]+}}] [0, {{[0-9]+}})
// INFO: layers.1.bias {{[A-Z0-9_]+}} [0, 4] [{{[0-9]+}}, {{[0-9]+}})
// INFO: layers.11.bias
// LOAD: loaded 24 tensors, {{[0-9]+}} bytes, from 1 file into device {{[0-9]+}}: {{[0-9.]+}} s, {{[0-9.]+}} GB/s
// LOAD-NEXT: verified {{[0-9]+}} bytes against the file and the generator
// CHANGED: loaded 24 tensors
// CHANGED: offloadio-checkpoint: error: tensor 'layers.11.bias' byte {{[0-9]+}}: device has [[B:0x[0-9a-f]+]], file has [[B]], generator gives {{0x[0-9a-f]+}}

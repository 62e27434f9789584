// The checkpoint example refuses malformed safetensors files: each load
// fails with exit status 1 (not a crash) and a message naming the tensor
// and the problem. The files come from Python (Inputs/safetensors-files.py).
//
// REQUIRES: checkpoint-example
// RUN: %clang-generic %checkpoint-link -o %t
// RUN: rm -rf %t.d && mkdir -p %t.d
// RUN: python3 %S/Inputs/safetensors-files.py malformed %t.d
// RUN: %not %libomptarget-run-generic load %t.d/missing.safetensors 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: %not %libomptarget-run-generic load %t.d/short.safetensors 2>&1 | FileCheck %s --check-prefix=SHORT
// RUN: %not %libomptarget-run-generic info %t.d/truncated.safetensors 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// RUN: %not %libomptarget-run-generic load %t.d/absurd.safetensors 2>&1 | FileCheck %s --check-prefix=ABSURD
// RUN: %not %libomptarget-run-generic load %t.d/not-json.safetensors 2>&1 | FileCheck %s --check-prefix=NOT-JSON
// RUN: %not %libomptarget-run-generic load %t.d/not-object.safetensors 2>&1 | FileCheck %s --check-prefix=NOT-OBJECT
// RUN: %not %libomptarget-run-generic load %t.d/missing-dtype.safetensors 2>&1 | FileCheck %s --check-prefix=MISSING-DTYPE
// RUN: %not %libomptarget-run-generic load %t.d/dtype-type.safetensors 2>&1 | FileCheck %s --check-prefix=DTYPE-TYPE
// RUN: %not %libomptarget-run-generic load %t.d/unknown-dtype.safetensors 2>&1 | FileCheck %s --check-prefix=UNKNOWN-DTYPE
// RUN: %not %libomptarget-run-generic load %t.d/negative-dim.safetensors 2>&1 | FileCheck %s --check-prefix=NEGATIVE-DIM
// RUN: %not %libomptarget-run-generic load %t.d/fractional-dim.safetensors 2>&1 | FileCheck %s --check-prefix=FRACTIONAL-DIM
// RUN: %not %libomptarget-run-generic load %t.d/outside.safetensors 2>&1 | FileCheck %s --check-prefix=OUTSIDE
// RUN: %not %libomptarget-run-generic load %t.d/begin-after-end.safetensors 2>&1 | FileCheck %s --check-prefix=BEGIN-AFTER-END
// RUN: %not %libomptarget-run-generic load %t.d/overlap.safetensors 2>&1 | FileCheck %s --check-prefix=OVERLAP
// RUN: %not %libomptarget-run-generic load %t.d/size-mismatch.safetensors 2>&1 | FileCheck %s --check-prefix=SIZE-MISMATCH
// RUN: %not %libomptarget-run-generic load %t.d/metadata.safetensors 2>&1 | FileCheck %s --check-prefix=METADATA
// Hostile headers: nested 100,000 deep (refused at the nesting limit, by
// load and info), an invalid entry followed by a valid one of its name,
// __metadata__ twice, bytes that are not UTF-8.
// RUN: %not %libomptarget-run-generic load %t.d/deep-arrays.safetensors 2>&1 | FileCheck %s --check-prefix=DEEP-ARRAYS
// RUN: %not %libomptarget-run-generic info %t.d/deep-arrays.safetensors 2>&1 | FileCheck %s --check-prefix=DEEP-ARRAYS
// RUN: %not %libomptarget-run-generic load %t.d/deep-objects.safetensors 2>&1 | FileCheck %s --check-prefix=DEEP-OBJECTS
// RUN: %not %libomptarget-run-generic info %t.d/deep-objects.safetensors 2>&1 | FileCheck %s --check-prefix=DEEP-OBJECTS
// RUN: %not %libomptarget-run-generic load %t.d/duplicate-dtype.safetensors 2>&1 | FileCheck %s --check-prefix=UNKNOWN-DTYPE
// RUN: %not %libomptarget-run-generic info %t.d/duplicate-dtype.safetensors 2>&1 | FileCheck %s --check-prefix=UNKNOWN-DTYPE
// RUN: %not %libomptarget-run-generic load %t.d/duplicate-dim.safetensors 2>&1 | FileCheck %s --check-prefix=NEGATIVE-DIM
// RUN: %not %libomptarget-run-generic load %t.d/duplicate-metadata.safetensors 2>&1 | FileCheck %s --check-prefix=DUPLICATE-METADATA
// RUN: %not %libomptarget-run-generic info %t.d/not-utf8.safetensors 2>&1 | FileCheck %s --check-prefix=NOT-UTF8
// Command-line mistakes are refused with the usage text.
// RUN: %not %libomptarget-run-generic load %t.d/short.safetensors --tensors 3 2>&1 | FileCheck %s --check-prefix=USAGE
// RUN: %not %libomptarget-run-generic save %t.d/x.safetensors --max-bytes 12Q 2>&1 | FileCheck %s --check-prefix=SIZE-ARG
// RUN: %not %libomptarget-run-generic load %t.d/short.safetensors --device 4096 2>&1 | FileCheck %s --check-prefix=DEVICE

// MISSING: offloadio-checkpoint: error: ompx_safetensors_open: open({{.*}}missing.safetensors, O_RDONLY): No such file or directory
// SHORT: error: {{.*}}short.safetensors: safetensors header: file of 3 bytes is shorter than the 8-byte header length
// TRUNCATED: error: {{.*}}truncated.safetensors: safetensors header: header length 100 is more than the 20 bytes the file holds after it
// ABSURD: error: {{.*}}absurd.safetensors: safetensors header: header length 1099511627776 is over the limit of 104857600 bytes (not a safetensors file?)
// NOT-JSON: error: {{.*}}not-json.safetensors: safetensors header: not JSON:
// NOT-OBJECT: error: {{.*}}: safetensors header: not a JSON object
// MISSING-DTYPE: error: {{.*}}: safetensors header: tensor 'w': missing field 'dtype'
// DTYPE-TYPE: error: {{.*}}: safetensors header: tensor 'w': field 'dtype' is not a string
// UNKNOWN-DTYPE: error: {{.*}}: safetensors header: tensor 'w': unknown dtype 'F128'
// NEGATIVE-DIM: error: {{.*}}: safetensors header: tensor 'w': shape[1] is negative (-1)
// FRACTIONAL-DIM: error: {{.*}}: safetensors header: tensor 'w': shape[0] is not an integer (2.5
// OUTSIDE: error: {{.*}}: safetensors header: tensor 'w': data_offsets [0, 128) end outside the data section of 64 bytes
// BEGIN-AFTER-END: error: {{.*}}: safetensors header: tensor 'w': data_offsets [8, 4): begin > end
// OVERLAP: error: {{.*}}: safetensors header: tensor 'b': data_offsets [8, 24) overlap tensor 'a' at [0, 16)
// SIZE-MISMATCH: error: {{.*}}: safetensors header: tensor 'w': data_offsets [0, 16) hold 16 bytes, but shape and dtype BF16 need 18
// METADATA: error: {{.*}}: safetensors header: '__metadata__' value of 'epoch' is not a string
// DEEP-ARRAYS: offloadio-checkpoint: error: {{.*}}deep-arrays.safetensors: safetensors header: arrays and objects nested more than 128 levels deep at byte 144
// DEEP-OBJECTS: offloadio-checkpoint: error: {{.*}}deep-objects.safetensors: safetensors header: arrays and objects nested more than 128 levels deep at byte 768
// DUPLICATE-METADATA: error: {{.*}}: safetensors header: '__metadata__' appears twice
// NOT-UTF8: error: {{.*}}: safetensors header: not UTF-8: invalid byte sequence at byte 3
// USAGE: error: unknown option '--tensors' for load
// USAGE: usage: offloadio-checkpoint save FILE
// SIZE-ARG: error: --max-bytes: not a size: '12Q'
// DEVICE: error: device 4096 does not exist

// offloadio-checkpoint load --devices: a sharded checkpoint that Python
// wrote, allocated and loaded onto host-plugin devices 0, 1 and 2 with one
// ompx_safetensors_load_split (one batch), split evenly by bytes; the
// tensors and bytes of each file and each device and the total rate are
// printed, and --verify checks every byte on every device against the file
// and the generator. Then one device, the initial device in the list, and
// the refusals: a device that does not exist, a device twice, a list that
// is no list, --device with --devices. No kernel runs.
//
// REQUIRES: checkpoint-example, x86_64-pc-linux-gnu
// RUN: %clang-generic %checkpoint-link -o %t
// RUN: rm -rf %t.sharded && mkdir -p %t.sharded
// RUN: python3 %S/Inputs/safetensors-files.py sharded %t.sharded 3
// RUN: %libomptarget-run-generic load %t.sharded/model.safetensors.index.json --devices 0,1,2 --verify | FileCheck %s
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic load %t.sharded/model.safetensors.index.json --devices 0,1,2 --verify | FileCheck %s
// RUN: %libomptarget-run-generic load %t.sharded/model.safetensors.index.json --devices 2 | FileCheck %s --check-prefix=ONE
// RUN: python3 %S/Inputs/safetensors-files.py make %t.st 5
// RUN: %libomptarget-run-generic load %t.st --devices 1,4 --verify | FileCheck %s --check-prefix=HOST
// RUN: %not %libomptarget-run-generic load %t.st --devices 0,99 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: %not %libomptarget-run-generic load %t.st --devices 1,0,1 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: %not %libomptarget-run-generic load %t.st --devices 0,x 2>&1 | FileCheck %s --check-prefix=NOT-A-LIST
// RUN: %not %libomptarget-run-generic load %t.st --devices 0, 2>&1 | FileCheck %s --check-prefix=NOT-A-LIST
// RUN: %not %libomptarget-run-generic load %t.st --device 0 --devices 1 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: %not %libomptarget-run-generic info %t.st --devices 1 2>&1 | FileCheck %s --check-prefix=INFO

// CHECK: model-00001-of-00002.safetensors: 8 tensors, [[F1:[0-9]+]] bytes
// CHECK-NEXT: model-00002-of-00002.safetensors: 7 tensors, [[F2:[0-9]+]] bytes
// CHECK-NEXT: device 0: {{[1-9][0-9]*}} tensors, {{[1-9][0-9]*}} bytes
// CHECK-NEXT: device 1: {{[1-9][0-9]*}} tensors, {{[1-9][0-9]*}} bytes
// CHECK-NEXT: device 2: {{[1-9][0-9]*}} tensors, {{[1-9][0-9]*}} bytes
// CHECK-NEXT: loaded 15 tensors, [[ALL:[0-9]+]] bytes, from 2 files onto devices 0,1,2 in one call and one batch: {{[0-9.]+}} s, {{[0-9.]+}} GB/s
// CHECK-NEXT: verified [[ALL]] bytes on 3 devices against the files and the generator

// ONE: device 2: 15 tensors, [[ALL:[0-9]+]] bytes
// ONE-NEXT: loaded 15 tensors, [[ALL]] bytes, from 2 files onto devices 2 in one call
// ONE-NOT: verified

// The file of checkpoint-load.c: 18257 bytes; the largest tensor (12804
// bytes) alone on device 1, the other four on the initial device (4).
// HOST: .st: 5 tensors, 18257 bytes
// HOST-NEXT: device 1: 1 tensors, 12804 bytes
// HOST-NEXT: device 4: 4 tensors, 5453 bytes
// HOST-NEXT: loaded 5 tensors, 18257 bytes, from 1 file onto devices 1,4 in one call and one batch
// HOST-NEXT: verified 18257 bytes on 2 devices against the file and the generator

// MISSING: offloadio-checkpoint: error: ompx_safetensors_load_split: devices[1]: device 99 does not exist (4 devices; the initial device is 4)
// TWICE: offloadio-checkpoint: error: ompx_safetensors_load_split: devices[2]: device 1 is in the list twice
// NOT-A-LIST: error: --devices: not a list of device numbers: '0,{{x?}}'
// NOT-A-LIST: usage: offloadio-checkpoint save FILE
// BOTH: error: --device and --devices: give one of them
// INFO: error: unknown option '--devices' for info

// SPDX-License-Identifier: Apache-2.0
//
// The one file compiled with the libomptarget version of the build
// (OFFLOADIO_LLVM_ABI, set by CMake from the LLVM found).
#include "offloadio/DeviceRuntimeABI.h"

unsigned offloadio::builtLibomptargetVersion() { return OFFLOADIO_LLVM_ABI; }

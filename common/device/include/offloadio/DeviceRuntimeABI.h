// SPDX-License-Identifier: Apache-2.0
//
// The conventions between a plugin, libomptarget and the OpenMP device
// runtime that changed between libomptarget 16, 17 and 18: where a kernel's
// configuration is recorded, the layout of the device environment, the
// implicit launch-environment argument, the launch-geometry rules and where
// mapped buffers are named. One
// object per version (RuntimeABIConventions.cpp); the framework asks it and
// never tests a version number itself.
#ifndef OFFLOADIO_DEVICERUNTIMEABI_H
#define OFFLOADIO_DEVICERUNTIMEABI_H

#include "offloadio/DeviceEnvironment.h"
#include "offloadio/Error.h"
#include "offloadio/LaunchGeometry.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace offloadio {

/// The device runtime's conventions of one libomptarget version.
class DeviceRuntimeABITy {
public:
  virtual ~DeviceRuntimeABITy();

  /// The libomptarget major version (16, 17 or 18).
  virtual unsigned getVersion() const = 0;

  /// The configuration of kernel \p KernelName as recorded in the image
  /// \p ImageBytes. Errors: a record of the wrong size or with an unknown
  /// execution mode.
  virtual Expected<KernelConfigTy>
  readKernelConfig(llvm::StringRef ImageBytes,
                   llvm::StringRef KernelName) const = 0;

  /// \p Env in the layout of this version's device runtime: the bytes to
  /// write into the image's device-environment global, whose size must
  /// match exactly.
  virtual llvm::SmallVector<char, 48>
  encodeDeviceEnvironment(const DeviceEnvironmentTy &Env) const = 0;

  /// Whether the device runtime's malloc carves its memory from a pool the
  /// plugin gives each image (libomptarget 18: the AMDGPU device runtime's
  /// DeviceMemoryPoolSymbol).
  virtual bool takesDeviceMemoryPool() const { return false; }
  /// Whether the device environment carries the image's table of
  /// indirectly callable functions (libomptarget 18).
  virtual bool takesIndirectCallTable() const { return false; }
  /// The bytes of the image global DeviceMemoryPoolSymbol for a pool of
  /// \p Size bytes at \p Ptr.
  virtual llvm::SmallVector<char, 32> encodeDeviceMemoryPool(void *Ptr,
                                                            uint64_t Size) const;
  /// The bytes of the image global DeviceMemoryPoolTrackerSymbol before the
  /// first allocation.
  virtual llvm::SmallVector<char, 32> encodeDeviceMemoryPoolTracker() const;

  /// Whether the plugin runs each GPU image's global constructors after
  /// loading it and its destructors at teardown, through the kernels the
  /// compiler's lowering of them adds (libomptarget 18; before, they were
  /// entries libomptarget launched).
  virtual bool runsImageConstructors() const { return false; }

  /// Whether kernels take a pointer to their launch environment as an
  /// implicit first argument (libomptarget 18; not the global constructor
  /// and destructor kernels).
  virtual bool passesLaunchEnvironment() const = 0;

  /// Whether libomptarget names mapped host buffers in data_notify_mapped
  /// (17 and 18) rather than in data_alloc (16).
  virtual bool notifiesMappedBuffers() const = 0;

  /// The launch-geometry rules of this version.
  virtual GeometryRulesTy getGeometryRules() const = 0;

  /// The private segment bytes per work-item of an AMDGPU dispatch of a
  /// kernel whose descriptor asks for \p KernelPrivate bytes and, when
  /// \p DynamicStack, has a call stack of unknown depth; \p StackSetting is
  /// LIBOMPTARGET_STACK_SIZE, 0 when unset.
  virtual uint64_t privateSegmentSize(uint64_t KernelPrivate,
                                      bool DynamicStack,
                                      uint64_t StackSetting) const;
};

/// The image global of the device runtime's malloc pool (libomptarget 18).
inline constexpr const char *DeviceMemoryPoolSymbol =
    "__omp_rtl_device_memory_pool";
/// The image global that counts the pool's allocations; an image without it
/// gets no pool, as with the stock plugin.
inline constexpr const char *DeviceMemoryPoolTrackerSymbol =
    "__omp_rtl_device_memory_pool_tracker";

/// The conventions of libomptarget \p Version (16, 17 or 18); null for
/// another version.
const DeviceRuntimeABITy *findDeviceRuntimeABI(unsigned Version);

/// The libomptarget version this build's entry points serve (the LLVM the
/// build was configured with).
unsigned builtLibomptargetVersion();

/// Whether \p KernelName is a global constructor or destructor kernel
/// (clang 17 and older), which takes no launch environment.
bool isGlobalCtorDtorKernel(llvm::StringRef KernelName);

/// The value of the implicit launch-environment argument of a kernel that
/// needs no reduction buffer: all bits set, which the device runtime never
/// dereferences.
inline void *launchEnvironmentSentinel() {
  return reinterpret_cast<void *>(~uintptr_t(0));
}

} // namespace offloadio

#endif // OFFLOADIO_DEVICERUNTIMEABI_H

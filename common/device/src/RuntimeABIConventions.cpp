// SPDX-License-Identifier: Apache-2.0
//
// The device-runtime conventions of libomptarget 16, 17 and 18
// (DeviceRuntimeABI.h): the one place that knows how they differ.
#include "offloadio/DeviceRuntimeABI.h"
#include "offloadio/ImageSymbols.h"

#include "llvm/ADT/SmallString.h"

#include <cstring>
#include <optional>

using namespace offloadio;

DeviceRuntimeABITy::~DeviceRuntimeABITy() = default;

llvm::SmallVector<char, 32>
DeviceRuntimeABITy::encodeDeviceMemoryPool(void *, uint64_t) const {
  return {};
}

llvm::SmallVector<char, 32>
DeviceRuntimeABITy::encodeDeviceMemoryPoolTracker() const {
  return {};
}

uint64_t DeviceRuntimeABITy::privateSegmentSize(uint64_t KernelPrivate,
                                                bool DynamicStack,
                                                uint64_t StackSetting) const {
  // Before 18 the stock plugin gives every kernel its descriptor's private
  // size alone, which a dynamic stack may outgrow; ours adds the setting
  // (1 KiB when unset) on top.
  constexpr uint64_t DefaultExtraStack = 1024;
  if (!DynamicStack)
    return KernelPrivate;
  return KernelPrivate + (StackSetting ? StackSetting : DefaultExtraStack);
}

bool offloadio::isGlobalCtorDtorKernel(llvm::StringRef KernelName) {
  // clang names them <prefix>_ctor and <prefix>_dtor.
  return KernelName.ends_with("tor");
}

namespace {

Expected<ExecModeTy> checkExecMode(int8_t Mode, llvm::StringRef KernelName) {
  if (Mode < int8_t(ExecModeTy::Generic) ||
      Mode > int8_t(ExecModeTy::GenericSPMD))
    return makeError(ErrorCode::InvalidImage,
                     "kernel '{0}' has unknown execution mode {1}", KernelName,
                     int(Mode));
  return ExecModeTy(Mode);
}

/// The bytes of kernel \p KernelName's record <kernel><Suffix> in
/// \p ImageBytes; none when the image has no such record. Error: a record
/// of another size than \p Size.
Expected<std::optional<llvm::StringRef>>
readKernelRecord(llvm::StringRef ImageBytes, llvm::StringRef KernelName,
                 llvm::StringRef Suffix, size_t Size) {
  llvm::SmallString<128> Global(KernelName);
  Global += Suffix;
  auto Bytes = readImageGlobal(ImageBytes, Global);
  if (!Bytes)
    return Bytes.takeError();
  if (*Bytes && (*Bytes)->size() != Size)
    return makeError(ErrorCode::InvalidImage,
                     "global '{0}' has {1} bytes, expected {2}", Global,
                     (*Bytes)->size(), Size);
  return *Bytes;
}

/// Append the bytes of \p Value.
template <typename T, unsigned N>
void appendBytes(llvm::SmallVector<char, N> &Out, T Value) {
  char Bytes[sizeof(T)];
  std::memcpy(Bytes, &Value, sizeof(T));
  Out.append(Bytes, Bytes + sizeof(T));
}

/// libomptarget 16: the mode in <kernel>_exec_mode (one byte), a device
/// environment of four 32-bit fields, no implicit argument.
class RuntimeABI16Ty : public DeviceRuntimeABITy {
public:
  unsigned getVersion() const override { return 16; }

  Expected<KernelConfigTy>
  readKernelConfig(llvm::StringRef ImageBytes,
                   llvm::StringRef KernelName) const override {
    auto Bytes = readKernelRecord(ImageBytes, KernelName, "_exec_mode", 1);
    if (!Bytes)
      return Bytes.takeError();
    KernelConfigTy Config;
    // Kernels that clang's OpenMP code generation did not make have none:
    // SPMD, as the stock plugins assume.
    if (!*Bytes)
      return Config;
    auto Mode = checkExecMode(int8_t((**Bytes)[0]), KernelName);
    if (!Mode)
      return Mode.takeError();
    Config.ExecMode = *Mode;
    return Config;
  }

  llvm::SmallVector<char, 48>
  encodeDeviceEnvironment(const DeviceEnvironmentTy &Env) const override {
    llvm::SmallVector<char, 48> Out;
    appendBytes(Out, Env.DebugKind);
    appendBytes(Out, Env.NumDevices);
    appendBytes(Out, Env.DeviceNum);
    appendBytes(Out, Env.DynamicMemSize);
    return Out;
  }

  bool passesLaunchEnvironment() const override { return false; }

  bool notifiesMappedBuffers() const override { return false; }

  GeometryRulesTy getGeometryRules() const override { return {}; }
};

/// libomptarget 17: as 16, with the device clock's frequency in the device
/// environment and fewer threads for short SPMD loops.
class RuntimeABI17Ty : public RuntimeABI16Ty {
public:
  unsigned getVersion() const override { return 17; }

  bool notifiesMappedBuffers() const override { return true; }

  llvm::SmallVector<char, 48>
  encodeDeviceEnvironment(const DeviceEnvironmentTy &Env) const override {
    llvm::SmallVector<char, 48> Out = RuntimeABI16Ty::encodeDeviceEnvironment(Env);
    appendBytes(Out, Env.ClockFrequency);
    return Out;
  }

  GeometryRulesTy getGeometryRules() const override {
    GeometryRulesTy Rules;
    Rules.LowTripCountThreads = true;
    return Rules;
  }
};

/// Layout of the 48-byte <kernel>_kernel_environment of libomptarget 18;
/// the plugin reads the first 28 bytes (the configuration).
constexpr size_t KernelEnvironmentSize = 48;
constexpr size_t ExecModeOffset = 2;
constexpr size_t MinThreadsOffset = 4;
constexpr size_t MaxThreadsOffset = 8;
constexpr size_t ReductionDataSizeOffset = 20;
constexpr size_t ReductionBufferLengthOffset = 24;

int32_t readInt32(llvm::StringRef Bytes, size_t Offset) {
  int32_t Value;
  std::memcpy(&Value, Bytes.data() + Offset, sizeof(Value));
  return Value;
}

/// libomptarget 18: the configuration in <kernel>_kernel_environment (no
/// record: a bare kernel), a 48-byte device environment, the launch
/// environment as every kernel's first argument.
class RuntimeABI18Ty : public RuntimeABI17Ty {
  /// The stock plugin's stack for kernels with a dynamic stack.
  static constexpr uint64_t DefaultDynamicStack = 16 * 1024;

public:
  unsigned getVersion() const override { return 18; }

  Expected<KernelConfigTy>
  readKernelConfig(llvm::StringRef ImageBytes,
                   llvm::StringRef KernelName) const override {
    auto Bytes = readKernelRecord(ImageBytes, KernelName,
                                  "_kernel_environment", KernelEnvironmentSize);
    if (!Bytes)
      return Bytes.takeError();
    KernelConfigTy Config;
    if (!*Bytes) {
      Config.IsBare = true;
      return Config;
    }
    llvm::StringRef Env = **Bytes;
    auto Mode = checkExecMode(int8_t(Env[ExecModeOffset]), KernelName);
    if (!Mode)
      return Mode.takeError();
    Config.ExecMode = *Mode;
    // Negative values mean "not recorded", as 0 does.
    auto Positive = [](int32_t V) { return V > 0 ? uint32_t(V) : 0u; };
    Config.MinThreads = Positive(readInt32(Env, MinThreadsOffset));
    Config.MaxThreads = Positive(readInt32(Env, MaxThreadsOffset));
    Config.ReductionDataSize = Positive(readInt32(Env, ReductionDataSizeOffset));
    Config.ReductionBufferLength =
        Positive(readInt32(Env, ReductionBufferLengthOffset));
    return Config;
  }

  llvm::SmallVector<char, 48>
  encodeDeviceEnvironment(const DeviceEnvironmentTy &Env) const override {
    llvm::SmallVector<char, 48> Out = RuntimeABI17Ty::encodeDeviceEnvironment(Env);
    appendBytes(Out, Env.IndirectCallTable);
    appendBytes(Out, Env.IndirectCallTableSize);
    appendBytes(Out, Env.HardwareParallelism);
    return Out;
  }

  bool passesLaunchEnvironment() const override { return true; }

  bool takesDeviceMemoryPool() const override { return true; }

  bool takesIndirectCallTable() const override { return true; }

  bool runsImageConstructors() const override { return true; }

  // DeviceMemoryPoolTy {void *Ptr; uint64_t Size}: the device bumps Ptr.
  llvm::SmallVector<char, 32>
  encodeDeviceMemoryPool(void *Ptr, uint64_t Size) const override {
    llvm::SmallVector<char, 32> Out;
    appendBytes(Out, Ptr);
    appendBytes(Out, Size);
    return Out;
  }

  // DeviceMemoryPoolTrackingTy {NumAllocations, AllocationTotal,
  // AllocationMin, AllocationMax}, all 64-bit; the minimum starts at the
  // 32-bit ~0 the stock plugin writes.
  llvm::SmallVector<char, 32> encodeDeviceMemoryPoolTracker() const override {
    llvm::SmallVector<char, 32> Out;
    for (uint64_t Field : {uint64_t(0), uint64_t(0), uint64_t(~0U), uint64_t(0)})
      appendBytes(Out, Field);
    return Out;
  }

  uint64_t privateSegmentSize(uint64_t KernelPrivate, bool DynamicStack,
                              uint64_t StackSetting) const override {
    // The stock plugin gives such a kernel the stack size in place of its
    // private size; never less than the descriptor asks, which the stock
    // plugin would give only to a setting below it.
    if (!DynamicStack)
      return KernelPrivate;
    return std::max(KernelPrivate,
                    StackSetting ? StackSetting : DefaultDynamicStack);
  }

  GeometryRulesTy getGeometryRules() const override {
    GeometryRulesTy Rules = RuntimeABI17Ty::getGeometryRules();
    Rules.ThreadLimitClauseKeepsThreads = true;
    Rules.BareKernelsTakeClauses = true;
    Rules.KernelThreadBounds = true;
    return Rules;
  }
};

} // namespace

const DeviceRuntimeABITy *offloadio::findDeviceRuntimeABI(unsigned Version) {
  // Stateless and immutable: one of each serves every plugin instance.
  static const RuntimeABI16Ty ABI16;
  static const RuntimeABI17Ty ABI17;
  static const RuntimeABI18Ty ABI18;
  switch (Version) {
  case 16:
    return &ABI16;
  case 17:
    return &ABI17;
  case 18:
    return &ABI18;
  default:
    return nullptr;
  }
}

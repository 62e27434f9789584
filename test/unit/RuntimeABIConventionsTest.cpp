// SPDX-License-Identifier: Apache-2.0
//
// The device-runtime conventions of libomptarget 16, 17 and 18
// (DeviceRuntimeABI.h), all three of which every build holds: where a
// kernel's configuration is read from (_exec_mode, the 48-byte
// _kernel_environment, none: a bare kernel), the device environment's
// three layouts, the implicit launch-environment argument, and the launch
// geometry each version's rules give (computeLaunchDims), against fixed
// cases and against a model of the stock plugins' getNumThreads and
// getNumBlocks (PluginInterface.cpp of 17 and 18; 16's without the
// low-trip-count lowering), on random inputs.
#include "offloadio/Device.h"
#include "offloadio/DeviceRuntimeABI.h"
#include "offloadio/LaunchGeometry.h"

#include "ELFImageBuilder.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

using namespace offloadio;
using offloadio::unittest::ELFBuilderTy;

namespace {

const DeviceRuntimeABITy &abi(unsigned Version) {
  const DeviceRuntimeABITy *ABI = findDeviceRuntimeABI(Version);
  EXPECT_NE(ABI, nullptr) << "libomptarget " << Version;
  static const DeviceRuntimeABITy *Fallback = findDeviceRuntimeABI(16);
  return ABI ? *ABI : *Fallback;
}

//===----------------------------------------------------------------------===//
// Versions
//===----------------------------------------------------------------------===//

TEST(RuntimeABIConventions, OneObjectPerSupportedVersion) {
  for (unsigned V : {16u, 17u, 18u}) {
    ASSERT_NE(findDeviceRuntimeABI(V), nullptr) << V;
    EXPECT_EQ(findDeviceRuntimeABI(V)->getVersion(), V);
    EXPECT_EQ(findDeviceRuntimeABI(V), findDeviceRuntimeABI(V));
  }
  for (unsigned V : {0u, 15u, 19u, 20u})
    EXPECT_EQ(findDeviceRuntimeABI(V), nullptr) << V;
  // The build serves one of them.
  EXPECT_NE(findDeviceRuntimeABI(builtLibomptargetVersion()), nullptr);
}

TEST(RuntimeABIConventions, WhatEachVersionPassesAndNotifies) {
  EXPECT_FALSE(abi(16).passesLaunchEnvironment());
  EXPECT_FALSE(abi(17).passesLaunchEnvironment());
  EXPECT_TRUE(abi(18).passesLaunchEnvironment());
  EXPECT_FALSE(abi(16).notifiesMappedBuffers());
  EXPECT_TRUE(abi(17).notifiesMappedBuffers());
  EXPECT_TRUE(abi(18).notifiesMappedBuffers());
  EXPECT_EQ(launchEnvironmentSentinel(),
            reinterpret_cast<void *>(~uintptr_t(0)));
}

TEST(RuntimeABIConventions, PrivateSegmentOfKernelsWithDynamicStacks) {
  // Without a dynamic stack every version gives the descriptor's size.
  for (unsigned V : {16u, 17u, 18u}) {
    EXPECT_EQ(abi(V).privateSegmentSize(0, false, 0), 0u) << V;
    EXPECT_EQ(abi(V).privateSegmentSize(272, false, 4096), 272u) << V;
  }
  // 16 and 17: the setting (1 KiB unset) on top of the descriptor's size.
  for (unsigned V : {16u, 17u}) {
    EXPECT_EQ(abi(V).privateSegmentSize(272, true, 0), 272u + 1024) << V;
    EXPECT_EQ(abi(V).privateSegmentSize(272, true, 8192), 272u + 8192) << V;
  }
  // 18: the stock plugin's stack (16 KiB unset) in place of it, never less
  // than the descriptor asks.
  EXPECT_EQ(abi(18).privateSegmentSize(272, true, 0), 16384u);
  EXPECT_EQ(abi(18).privateSegmentSize(272, true, 4096), 4096u);
  EXPECT_EQ(abi(18).privateSegmentSize(20000, true, 4096), 20000u);
  EXPECT_EQ(abi(18).privateSegmentSize(20000, true, 0), 20000u);
}

TEST(RuntimeABIConventions, CtorAndDtorKernelsAreRecognisedByName) {
  EXPECT_TRUE(isGlobalCtorDtorKernel("__omp_offloading_fd02_1234_ctor"));
  EXPECT_TRUE(isGlobalCtorDtorKernel("__omp_offloading_fd02_1234_dtor"));
  EXPECT_FALSE(isGlobalCtorDtorKernel("__omp_offloading_fd02_1234_main_l7"));
  EXPECT_FALSE(isGlobalCtorDtorKernel("__omp_offloading_fd02_1234_ctorx"));
  EXPECT_FALSE(isGlobalCtorDtorKernel(""));
}

TEST(RuntimeABIConventions, GeometryRulesPerVersion) {
  GeometryRulesTy R16 = abi(16).getGeometryRules();
  GeometryRulesTy R17 = abi(17).getGeometryRules();
  GeometryRulesTy R18 = abi(18).getGeometryRules();
  EXPECT_FALSE(R16.LowTripCountThreads || R16.ThreadLimitClauseKeepsThreads ||
               R16.BareKernelsTakeClauses || R16.KernelThreadBounds);
  EXPECT_TRUE(R17.LowTripCountThreads);
  EXPECT_FALSE(R17.ThreadLimitClauseKeepsThreads ||
               R17.BareKernelsTakeClauses || R17.KernelThreadBounds);
  EXPECT_TRUE(R18.LowTripCountThreads && R18.ThreadLimitClauseKeepsThreads &&
              R18.BareKernelsTakeClauses && R18.KernelThreadBounds);
}

//===----------------------------------------------------------------------===//
// Kernel configuration
//===----------------------------------------------------------------------===//

/// A libomptarget 18 <kernel>_kernel_environment of \p Size bytes (48 is
/// right), with the configuration fields at their offsets.
std::string kernelEnvironment(int8_t ExecMode, int32_t MinThreads,
                              int32_t MaxThreads, int32_t ReductionDataSize,
                              int32_t ReductionBufferLength, size_t Size = 48) {
  std::string Env(std::max<size_t>(Size, 28), '\0');
  Env[0] = 2; // UseGenericStateMachine: unknown.
  Env[1] = 2; // MayUseNestedParallelism: unknown.
  Env[2] = char(ExecMode);
  auto Put = [&](size_t Off, int32_t V) { std::memcpy(&Env[Off], &V, 4); };
  Put(4, MinThreads);
  Put(8, MaxThreads);
  Put(12, -1); // MinTeams, read by the device only.
  Put(16, -1); // MaxTeams.
  Put(20, ReductionDataSize);
  Put(24, ReductionBufferLength);
  // Ident and DynamicEnv (offsets 32 and 40) are unrelocated pointers the
  // plugin never reads.
  if (Env.size() >= 48)
    std::memset(&Env[32], 0xAB, 16);
  Env.resize(Size);
  return Env;
}

/// An image with kernels of both conventions.
std::string mixedImage() {
  ELFBuilderTy B(0x10000);
  // 16/17: one byte of mode per kernel.
  B.addDataGlobal("k_generic_exec_mode", "\x01");
  B.addDataGlobal("k_spmd_exec_mode", "\x02");
  B.addDataGlobal("k_genspmd_exec_mode", "\x03");
  // 18: the kernel environment.
  B.addDataGlobal("k_generic_kernel_environment",
                  kernelEnvironment(1, 1, 256, 0, 0));
  B.addDataGlobal("k_spmd_kernel_environment",
                  kernelEnvironment(2, 1, 256, 4, 1024));
  B.addDataGlobal("k_genspmd_kernel_environment",
                  kernelEnvironment(3, 96, 64, 0, 0));
  // 18 only.
  B.addDataGlobal("k_negative_kernel_environment",
                  kernelEnvironment(2, -1, -1, -4, 1024));
  return B.build();
}

KernelConfigTy readConfig(unsigned Version, llvm::StringRef Image,
                          llvm::StringRef Kernel) {
  auto Config = abi(Version).readKernelConfig(Image, Kernel);
  EXPECT_TRUE(bool(Config)) << Version << " " << Kernel.str() << ": "
                            << takeErrorMessage(Config.takeError());
  return Config ? *Config : KernelConfigTy();
}

TEST(RuntimeABIConventions, ExecModeRecordsGiveTheConfigurationOf16And17) {
  std::string Image = mixedImage();
  for (unsigned V : {16u, 17u}) {
    KernelConfigTy G = readConfig(V, Image, "k_generic");
    EXPECT_EQ(G.ExecMode, ExecModeTy::Generic) << V;
    EXPECT_EQ(readConfig(V, Image, "k_spmd").ExecMode, ExecModeTy::SPMD);
    EXPECT_EQ(readConfig(V, Image, "k_genspmd").ExecMode,
              ExecModeTy::GenericSPMD);
    // The kernel environment is 18's: ignored, nothing else recorded.
    KernelConfigTy S = readConfig(V, Image, "k_spmd");
    EXPECT_FALSE(S.IsBare);
    EXPECT_EQ(S.MinThreads, 0u);
    EXPECT_EQ(S.MaxThreads, 0u);
    EXPECT_FALSE(S.needsReductionBuffer());
    // No record: SPMD, and not bare (16 and 17 know no bare kernels).
    KernelConfigTy None = readConfig(V, Image, "k_negative");
    EXPECT_EQ(None.ExecMode, ExecModeTy::SPMD) << V;
    EXPECT_FALSE(None.IsBare) << V;
  }
}

TEST(RuntimeABIConventions, KernelEnvironmentGivesTheConfigurationOf18) {
  std::string Image = mixedImage();
  KernelConfigTy G = readConfig(18, Image, "k_generic");
  EXPECT_EQ(G.ExecMode, ExecModeTy::Generic);
  EXPECT_FALSE(G.IsBare);
  EXPECT_EQ(G.MinThreads, 1u);
  EXPECT_EQ(G.MaxThreads, 256u);
  EXPECT_FALSE(G.needsReductionBuffer());

  KernelConfigTy S = readConfig(18, Image, "k_spmd");
  EXPECT_EQ(S.ExecMode, ExecModeTy::SPMD);
  EXPECT_EQ(S.ReductionDataSize, 4u);
  EXPECT_EQ(S.ReductionBufferLength, 1024u);
  EXPECT_TRUE(S.needsReductionBuffer());

  KernelConfigTy GS = readConfig(18, Image, "k_genspmd");
  EXPECT_EQ(GS.ExecMode, ExecModeTy::GenericSPMD);
  EXPECT_EQ(GS.MinThreads, 96u);
  EXPECT_EQ(GS.MaxThreads, 64u);

  // Negative values are "not recorded", as 0 is.
  KernelConfigTy N = readConfig(18, Image, "k_negative");
  EXPECT_EQ(N.MinThreads, 0u);
  EXPECT_EQ(N.MaxThreads, 0u);
  EXPECT_EQ(N.ReductionDataSize, 0u);
  EXPECT_FALSE(N.needsReductionBuffer());
}

TEST(RuntimeABIConventions, KernelsWithoutAnEnvironmentAreBareUnder18) {
  // An x86_64 image (no environment at all), and an image with only 16's
  // records: every kernel is bare, in SPMD mode.
  ELFBuilderTy Old;
  Old.addDataGlobal("k_exec_mode", "\x01");
  for (const std::string &Image : {std::string(), Old.build(), mixedImage()}) {
    KernelConfigTy C = readConfig(18, Image, "k");
    EXPECT_TRUE(C.IsBare);
    EXPECT_EQ(C.ExecMode, ExecModeTy::SPMD);
    EXPECT_EQ(C.MinThreads, 0u);
    EXPECT_EQ(C.MaxThreads, 0u);
    EXPECT_FALSE(C.needsReductionBuffer());
  }
}

TEST(RuntimeABIConventions, BadKernelRecordsAreErrorsNamingTheGlobal) {
  ELFBuilderTy B;
  B.addDataGlobal("short_kernel_environment",
                  kernelEnvironment(2, 1, 1, 0, 0, 28));
  B.addDataGlobal("long_kernel_environment",
                  kernelEnvironment(2, 1, 1, 0, 0, 49));
  B.addDataGlobal("off_by_one_kernel_environment",
                  kernelEnvironment(2, 1, 1, 0, 0, 47));
  B.addDataGlobal("zero_kernel_environment", kernelEnvironment(0, 1, 1, 0, 0));
  B.addDataGlobal("four_kernel_environment", kernelEnvironment(4, 1, 1, 0, 0));
  B.addDataGlobal("minus_kernel_environment",
                  kernelEnvironment(-1, 1, 1, 0, 0));
  B.addBssGlobal("bss_kernel_environment", 48);
  B.addDataGlobal("wide_exec_mode", std::string("\x02\x00", 2));
  B.addDataGlobal("four_exec_mode", "\x04");
  B.addDataGlobal("empty_exec_mode", "");
  std::string Image = B.build();
  auto ExpectError = [&](unsigned V, const char *Kernel, const char *Word) {
    auto C = abi(V).readKernelConfig(Image, Kernel);
    ASSERT_FALSE(bool(C)) << V << " " << Kernel;
    std::string Msg = takeErrorMessage(C.takeError());
    EXPECT_NE(Msg.find(Kernel), std::string::npos) << Msg;
    EXPECT_NE(Msg.find(Word), std::string::npos) << Msg;
  };
  ExpectError(18, "short", "28 bytes, expected 48");
  ExpectError(18, "long", "49 bytes, expected 48");
  ExpectError(18, "off_by_one", "47 bytes, expected 48");
  ExpectError(18, "zero", "execution mode 0");
  ExpectError(18, "four", "execution mode 4");
  ExpectError(18, "minus", "execution mode -1");
  ExpectError(18, "bss", "bss");
  for (unsigned V : {16u, 17u}) {
    ExpectError(V, "wide", "2 bytes, expected 1");
    ExpectError(V, "four", "execution mode 4");
    ExpectError(V, "empty", "empty");
    // 18's records mean nothing to 16 and 17.
    EXPECT_TRUE(bool(abi(V).readKernelConfig(Image, "short")));
  }
  // 16's records mean nothing to 18: the kernel is bare.
  EXPECT_TRUE(readConfig(18, Image, "wide").IsBare);
}

//===----------------------------------------------------------------------===//
// Device environment
//===----------------------------------------------------------------------===//

template <typename T> T fieldAt(llvm::ArrayRef<char> Bytes, size_t Off) {
  T V;
  EXPECT_LE(Off + sizeof(T), Bytes.size());
  std::memcpy(&V, Bytes.data() + Off, sizeof(T));
  return V;
}

TEST(RuntimeABIConventions, DeviceEnvironmentLayoutPerVersion) {
  DeviceEnvironmentTy Env;
  Env.DebugKind = 0x11;
  Env.NumDevices = 3;
  Env.DeviceNum = 2;
  Env.DynamicMemSize = 4096;
  Env.ClockFrequency = 0x0102030405060708ull;
  Env.IndirectCallTable = 0x7000000000ull;
  Env.IndirectCallTableSize = 5;
  Env.HardwareParallelism = 440 * 32;

  auto E16 = abi(16).encodeDeviceEnvironment(Env);
  auto E17 = abi(17).encodeDeviceEnvironment(Env);
  auto E18 = abi(18).encodeDeviceEnvironment(Env);
  ASSERT_EQ(E16.size(), 16u);
  ASSERT_EQ(E17.size(), 24u);
  ASSERT_EQ(E18.size(), 48u);
  for (llvm::ArrayRef<char> E :
       {llvm::ArrayRef<char>(E16), llvm::ArrayRef<char>(E17),
        llvm::ArrayRef<char>(E18)}) {
    EXPECT_EQ(fieldAt<uint32_t>(E, 0), 0x11u);
    EXPECT_EQ(fieldAt<uint32_t>(E, 4), 3u);
    EXPECT_EQ(fieldAt<uint32_t>(E, 8), 2u);
    EXPECT_EQ(fieldAt<uint32_t>(E, 12), 4096u);
  }
  // Each layout extends the one before.
  EXPECT_TRUE(std::equal(E16.begin(), E16.end(), E17.begin()));
  EXPECT_TRUE(std::equal(E17.begin(), E17.end(), E18.begin()));
  EXPECT_EQ(fieldAt<uint64_t>(E17, 16), 0x0102030405060708ull);
  EXPECT_EQ(fieldAt<uint64_t>(E18, 24), 0x7000000000ull);
  EXPECT_EQ(fieldAt<uint64_t>(E18, 32), 5u);
  EXPECT_EQ(fieldAt<uint64_t>(E18, 40), 440u * 32);

  // The defaults: nothing but the clock is non-zero.
  auto D18 = abi(18).encodeDeviceEnvironment(DeviceEnvironmentTy());
  ASSERT_EQ(D18.size(), 48u);
  EXPECT_EQ(fieldAt<uint64_t>(D18, 16), DeviceEnvironmentTy().ClockFrequency);
  for (size_t Off : {0u, 4u, 8u, 12u})
    EXPECT_EQ(fieldAt<uint32_t>(D18, Off), 0u) << Off;
  for (size_t Off : {24u, 32u, 40u})
    EXPECT_EQ(fieldAt<uint64_t>(D18, Off), 0u) << Off;
}

//===----------------------------------------------------------------------===//
// Launch geometry
//===----------------------------------------------------------------------===//

/// The stock GenericKernelTy of libomptarget \p Version, written from
/// PluginInterface.cpp (17: getNumThreads :295-304, getNumBlocks :306-386;
/// 18: init :433-467, getNumThreads :605-619, getNumBlocks :621-706); 16
/// is 17 without the low-trip-count branch. "Device" values are the
/// plugin's grid values: thread limit, block limit, default threads and
/// blocks, warp size.
struct StockModelTy {
  unsigned Version;
  uint32_t ThreadLimit, BlockLimit, DefaultThreads, DefaultBlocks, WarpSize;
  uint32_t MinThreadsForLowTripCount;

  LaunchDimsTy launch(const KernelConfigTy &Config,
                      const KernelArgsTy &Args) const {
    // The kernel's init.
    bool Bare = Version >= 18 && Config.IsBare;
    uint32_t MaxNumThreads = ThreadLimit, Preferred = DefaultThreads;
    if (Version >= 18) {
      if (Config.MaxThreads > 0)
        MaxNumThreads = std::min(Config.MaxThreads, ThreadLimit);
      if (Config.MinThreads > 0)
        Preferred = std::max(Config.MinThreads, DefaultThreads);
    }
    bool Generic = Config.ExecMode == ExecModeTy::Generic;
    bool SPMD = Config.ExecMode == ExecModeTy::SPMD;

    // getNumThreads, which adds the warp to the caller's clause.
    uint32_t Clause = Args.ThreadLimit[0];
    uint32_t NumThreads;
    if (Bare && Clause > 0) {
      NumThreads = Clause;
    } else {
      if (Clause > 0 && Generic)
        Clause += WarpSize;
      NumThreads = std::min(MaxNumThreads, Clause > 0 ? Clause : Preferred);
    }
    bool ThreadsFromUser = Version >= 18 && Clause > 0;

    // getNumBlocks, which may lower NumThreads.
    uint64_t Blocks;
    if (Bare && Args.NumTeams[0] > 0) {
      Blocks = Args.NumTeams[0];
    } else if (Args.NumTeams[0] > 0) {
      Blocks = std::min(Args.NumTeams[0], BlockLimit);
    } else {
      uint64_t Default = DefaultBlocks;
      uint64_t TripBlocks = UINT64_MAX;
      uint64_t Trip = Args.Tripcount;
      if (Trip > 0) {
        if (SPMD && Version >= 17) {
          uint32_t MinThreads = std::min(MinThreadsForLowTripCount, NumThreads);
          if (Trip >= Default * NumThreads || ThreadsFromUser) {
            TripBlocks = (Trip - 1) / NumThreads + 1;
          } else if (Trip >= Default * MinThreads) {
            uint64_t PerBlock = (Trip + Default - 1) / Default;
            uint64_t P2 = 1;
            while (P2 < PerBlock)
              P2 <<= 1;
            NumThreads = uint32_t(std::min<uint64_t>(NumThreads, P2));
            TripBlocks = (Trip - 1) / NumThreads + 1;
          } else {
            NumThreads = std::min(NumThreads, MinThreads);
            TripBlocks = (Trip - 1) / NumThreads + 1;
          }
        } else if (SPMD) {
          TripBlocks = (Trip - 1) / NumThreads + 1;
        } else {
          TripBlocks = Trip;
        }
      }
      Blocks = std::min<uint64_t>(std::min(TripBlocks, Default), BlockLimit);
    }
    LaunchDimsTy Dims;
    Dims.NumThreads = NumThreads;
    Dims.NumTeams = uint32_t(Blocks);
    return Dims;
  }
};

/// An AMD GPU as the stock plugins see it: 110 compute units, 4 teams each.
DeviceLimitsTy amdLimits() {
  DeviceLimitsTy L;
  L.MaxTeams = 65536;
  L.MaxThreads = 1024;
  L.DefaultTeams = 440;
  L.DefaultThreads = 256;
  L.WarpSize = 64;
  return L;
}

KernelArgsTy launchArgs(uint32_t NumTeams, uint32_t ThreadLimit,
                        uint64_t Tripcount) {
  KernelArgsTy Args{};
  Args.Version = 2;
  Args.NumTeams[0] = NumTeams;
  Args.ThreadLimit[0] = ThreadLimit;
  Args.Tripcount = Tripcount;
  return Args;
}

LaunchDimsTy dims(unsigned Version, const DeviceLimitsTy &Limits,
                  const KernelConfigTy &Config, const KernelArgsTy &Args,
                  uint32_t KernelMaxThreads = UINT32_MAX,
                  uint32_t MinThreadsForLowTripCount = 32) {
  return computeLaunchDims(Limits, KernelMaxThreads, Config,
                           abi(Version).getGeometryRules(),
                           MinThreadsForLowTripCount, Args);
}

#define EXPECT_DIMS(D, Teams, Threads)                                         \
  do {                                                                         \
    LaunchDimsTy Got = (D);                                                    \
    EXPECT_EQ(Got.NumTeams, uint32_t(Teams)) << "teams";                       \
    EXPECT_EQ(Got.NumThreads, uint32_t(Threads)) << "threads";                 \
  } while (0)

KernelConfigTy spmd() { return KernelConfigTy(); }

TEST(RuntimeABIConventionsGeometry, ShortSPMDLoopsGetFewerThreadsFrom17On) {
  DeviceLimitsTy L = amdLimits();
  // 1000 iterations: fewer than 440 teams of 32 threads, so 32 threads a
  // team from 17 on; 16 keeps full teams of 256.
  EXPECT_DIMS(dims(16, L, spmd(), launchArgs(0, 0, 1000)), 4, 256);
  EXPECT_DIMS(dims(17, L, spmd(), launchArgs(0, 0, 1000)), 32, 32);
  EXPECT_DIMS(dims(18, L, spmd(), launchArgs(0, 0, 1000)), 32, 32);
  // 20000 iterations fill 440 teams of 32: threads a power of two that
  // covers the loop with the default teams (46 -> 64).
  EXPECT_DIMS(dims(16, L, spmd(), launchArgs(0, 0, 20000)), 79, 256);
  EXPECT_DIMS(dims(17, L, spmd(), launchArgs(0, 0, 20000)), 313, 64);
  EXPECT_DIMS(dims(18, L, spmd(), launchArgs(0, 0, 20000)), 313, 64);
  // Long loops: full teams, capped at the default.
  for (unsigned V : {16u, 17u, 18u})
    EXPECT_DIMS(dims(V, L, spmd(), launchArgs(0, 0, 440 * 256)), 440, 256);
  // LIBOMPTARGET_MIN_THREADS_FOR_LOW_TRIP_COUNT sets the floor.
  EXPECT_DIMS(dims(17, L, spmd(), launchArgs(0, 0, 1000), UINT32_MAX, 8), 125,
              8);
  // Generic and generic-SPMD kernels: one team per iteration, any version.
  for (ExecModeTy Mode : {ExecModeTy::Generic, ExecModeTy::GenericSPMD}) {
    KernelConfigTy C;
    C.ExecMode = Mode;
    for (unsigned V : {16u, 17u, 18u})
      EXPECT_DIMS(dims(V, L, C, launchArgs(0, 0, 100)), 100, 256);
  }
}

TEST(RuntimeABIConventionsGeometry, ThreadLimitClauseKeepsItsThreadsIn18) {
  DeviceLimitsTy L = amdLimits();
  // thread_limit(256) on a short loop: 17 still lowers, 18 does not.
  EXPECT_DIMS(dims(16, L, spmd(), launchArgs(0, 256, 1000)), 4, 256);
  EXPECT_DIMS(dims(17, L, spmd(), launchArgs(0, 256, 1000)), 32, 32);
  EXPECT_DIMS(dims(18, L, spmd(), launchArgs(0, 256, 1000)), 4, 256);
  // Generic mode adds a warp for the main thread, capped by the device.
  KernelConfigTy G;
  G.ExecMode = ExecModeTy::Generic;
  for (unsigned V : {16u, 17u, 18u}) {
    EXPECT_DIMS(dims(V, L, G, launchArgs(0, 128, 0)), 440, 192);
    EXPECT_DIMS(dims(V, L, G, launchArgs(0, 1000, 0)), 440, 1024);
  }
}

TEST(RuntimeABIConventionsGeometry, BareKernelsTakeTheirClausesVerbatimIn18) {
  DeviceLimitsTy L = amdLimits();
  KernelConfigTy Bare;
  Bare.IsBare = true;
  EXPECT_DIMS(dims(18, L, Bare, launchArgs(100000, 5000, 0)), 100000, 5000);
  // Kernel limits do not apply either.
  EXPECT_DIMS(dims(18, L, Bare, launchArgs(3, 2000, 0), 64), 3, 2000);
  // 16 and 17 have no bare kernels: the clauses are capped.
  for (unsigned V : {16u, 17u})
    EXPECT_DIMS(dims(V, L, Bare, launchArgs(100000, 5000, 0)), 65536, 1024);
  // Without clauses a bare kernel is an SPMD kernel.
  EXPECT_DIMS(dims(18, L, Bare, launchArgs(0, 0, 0)), 440, 256);
  EXPECT_DIMS(dims(18, L, Bare, launchArgs(0, 0, 1000)), 32, 32);
  // The host device (one team of one thread) under 18: the clauses win.
  DeviceLimitsTy Host;
  EXPECT_DIMS(dims(18, Host, Bare, launchArgs(4, 8, 0)), 4, 8);
  EXPECT_DIMS(dims(18, Host, Bare, launchArgs(0, 0, 1000)), 1, 1);
  EXPECT_DIMS(dims(17, Host, Bare, launchArgs(4, 8, 0)), 1, 1);
}

TEST(RuntimeABIConventionsGeometry, KernelMinAndMaxThreadsCountFrom18) {
  DeviceLimitsTy L = amdLimits();
  // clang-18's AMD default: MaxThreads 256 caps a thread_limit of 1024.
  KernelConfigTy C;
  C.MinThreads = 1;
  C.MaxThreads = 256;
  EXPECT_DIMS(dims(18, L, C, launchArgs(0, 1024, 0)), 440, 256);
  EXPECT_DIMS(dims(17, L, C, launchArgs(0, 1024, 0)), 440, 1024);
  // thread_limit(64) compiled in: MaxThreads 64.
  C.MaxThreads = 64;
  EXPECT_DIMS(dims(18, L, C, launchArgs(4, 0, 0)), 4, 64);
  EXPECT_DIMS(dims(16, L, C, launchArgs(4, 0, 0)), 4, 256);
  // MinThreads raises the default threads, within the maxima.
  C.MinThreads = 512;
  C.MaxThreads = 0;
  EXPECT_DIMS(dims(18, L, C, launchArgs(0, 0, 0)), 440, 512);
  EXPECT_DIMS(dims(18, L, C, launchArgs(0, 0, 0), 300), 440, 300);
  EXPECT_DIMS(dims(17, L, C, launchArgs(0, 0, 0)), 440, 256);
}

TEST(RuntimeABIConventionsGeometry, RandomLaunchesMatchTheStockModel) {
  std::mt19937_64 Rng(0x18171600);
  auto Pick = [&](std::initializer_list<uint64_t> Values) {
    auto It = Values.begin();
    std::advance(It, Rng() % Values.size());
    return *It;
  };
  auto Upto = [&](uint64_t N) { return Rng() % (N + 1); };
  unsigned Checked = 0;
  for (unsigned Round = 0; Round < 30000; ++Round) {
    // A device as a backend reports it, bounded as GenericDeviceTy::init
    // bounds it.
    DeviceLimitsTy L;
    L.MaxThreads = uint32_t(Pick({1, 32, 128, 256, 1024, 1 + Upto(2048)}));
    L.MaxTeams = uint32_t(Pick({1, 1024, 65536, 1 + Upto(100000)}));
    L.DefaultThreads = uint32_t(Pick({1, 64, 128, 256, 1 + Upto(2048)}));
    L.DefaultTeams = uint32_t(Pick({1, 104, 440, 3200, 1 + Upto(5000)}));
    L.WarpSize = uint32_t(Pick({1, 32, 64}));
    deriveLaunchLimits(L, 0, 0);
    uint32_t KernelMax = uint32_t(Pick({UINT32_MAX, 1024, 1 + Upto(1024)}));
    uint32_t MinLow = uint32_t(Pick({32, 0, 1, 8, Upto(512)}));

    unsigned Version = unsigned(Pick({16, 17, 18}));
    KernelConfigTy C;
    C.ExecMode = ExecModeTy(Pick({1, 2, 2, 3}));
    if (Version == 18 && Rng() % 4 == 0) {
      // What 18 reads for a kernel without an environment.
      C = KernelConfigTy();
      C.IsBare = true;
    } else {
      C.IsBare = Version < 18 && Rng() % 4 == 0; // Ignored before 18.
      C.MinThreads = uint32_t(Pick({0, 1, 1, 32, Upto(2048)}));
      C.MaxThreads = uint32_t(Pick({0, 64, 128, 256, Upto(2048)}));
    }
    KernelArgsTy A = launchArgs(
        uint32_t(Pick({0, 0, 0, 1, Upto(8), Upto(200000)})),
        uint32_t(Pick({0, 0, 0, 1, 64, 256, Upto(4096)})),
        Pick({0, 1, Upto(64), Upto(20000), Upto(1u << 24), Upto(1ull << 40)}));

    StockModelTy Stock{Version,        std::min(L.MaxThreads, KernelMax),
                       L.MaxTeams,     L.DefaultThreads,
                       L.DefaultTeams, L.WarpSize,
                       MinLow};
    LaunchDimsTy Want = Stock.launch(C, A);
    LaunchDimsTy Got = dims(Version, L, C, A, KernelMax, MinLow);
    ++Checked;
    if (Got.NumTeams != Want.NumTeams || Got.NumThreads != Want.NumThreads) {
      ADD_FAILURE() << "libomptarget " << Version << ": got " << Got.NumTeams
                    << " x " << Got.NumThreads << ", stock gives "
                    << Want.NumTeams << " x " << Want.NumThreads
                    << "\n  device: max " << L.MaxTeams << " x " << L.MaxThreads
                    << ", default " << L.DefaultTeams << " x "
                    << L.DefaultThreads << ", warp " << L.WarpSize
                    << "; kernel max " << KernelMax << "; low-trip min "
                    << MinLow << "\n  kernel: mode " << int(C.ExecMode)
                    << (C.IsBare ? " bare" : "") << ", threads " << C.MinThreads
                    << ".." << C.MaxThreads << "\n  launch: num_teams "
                    << A.NumTeams[0] << ", thread_limit " << A.ThreadLimit[0]
                    << ", trip " << A.Tripcount;
      break;
    }
  }
  EXPECT_EQ(Checked, 30000u);
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// The amdgpu plugin on the HSA emulation (two GPU agents) asked about
// memory the program allocated through HSA itself, as hipMalloc does
// (hsa_amd_memory_pool_allocate from a GPU's global pool): memory of the
// device's own agent is this device's, bounded by the allocation, from any
// pointer into it; memory of the other GPU names that agent and the
// plugin's device serving it; memory of the CPU's pools, locked host
// memory, plain host memory and freed memory are unknown.
#include "HSAEmuFixture.h"
#include "offloadio/Plugin.h"

#include "gtest/gtest.h"

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace offloadio;

namespace {

// The emulation reads its settings at the first hsa_init of the process.
[[maybe_unused]] const bool EnvSet =
    (offloadio::test::setEmuEnv("abort"), true);

/// The agents of the runtime and a global pool of each, in the order
/// hsa_iterate_agents gives them (the plugin numbers its GPUs so).
struct AgentPoolsTy {
  std::vector<hsa_agent_t> Gpus;
  std::vector<hsa_amd_memory_pool_t> GpuPools;
  hsa_agent_t Cpu = {0};
  hsa_amd_memory_pool_t CpuPool = {0};
};

hsa_status_t firstGlobalPool(hsa_amd_memory_pool_t Pool, void *Data) {
  hsa_amd_segment_t Segment;
  bool Allocates = false;
  if (hsa_amd_memory_pool_get_info(Pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
                                   &Segment) != HSA_STATUS_SUCCESS ||
      hsa_amd_memory_pool_get_info(
          Pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &Allocates) !=
          HSA_STATUS_SUCCESS)
    return HSA_STATUS_ERROR;
  auto *Out = static_cast<hsa_amd_memory_pool_t *>(Data);
  if (Segment == HSA_AMD_SEGMENT_GLOBAL && Allocates && !Out->handle)
    *Out = Pool;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t collectAgent(hsa_agent_t Agent, void *Data) {
  auto &Out = *static_cast<AgentPoolsTy *>(Data);
  hsa_device_type_t Type;
  if (hsa_agent_get_info(Agent, HSA_AGENT_INFO_DEVICE, &Type) !=
      HSA_STATUS_SUCCESS)
    return HSA_STATUS_ERROR;
  hsa_amd_memory_pool_t Pool = {0};
  if (hsa_amd_agent_iterate_memory_pools(Agent, firstGlobalPool, &Pool) !=
      HSA_STATUS_SUCCESS)
    return HSA_STATUS_ERROR;
  if (Type == HSA_DEVICE_TYPE_GPU) {
    Out.Gpus.push_back(Agent);
    Out.GpuPools.push_back(Pool);
  } else if (Type == HSA_DEVICE_TYPE_CPU && !Out.Cpu.handle) {
    Out.Cpu = Agent;
    Out.CpuPool = Pool;
  }
  return HSA_STATUS_SUCCESS;
}

class AMDGPUForeignMemoryTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Plugin = createPlugin().release();
    ASSERT_FALSE(bool(Plugin->init()));
    ASSERT_EQ(Plugin->getNumDevices(), 2);
    for (int32_t Id : {0, 1}) {
      Error Err = Plugin->initDevice(Id);
      ASSERT_FALSE(bool(Err)) << takeErrorMessage(std::move(Err));
    }
    ASSERT_EQ(hsa_iterate_agents(collectAgent, &Agents), HSA_STATUS_SUCCESS);
    ASSERT_EQ(Agents.Gpus.size(), 2u);
    ASSERT_TRUE(Agents.CpuPool.handle);
  }

  GenericDeviceTy &device(int32_t Id) {
    auto Device = Plugin->getDevice(Id);
    EXPECT_TRUE(bool(Device)) << takeErrorMessage(Device.takeError());
    return *Device;
  }
  /// \p Size bytes of \p Pool, as hipMalloc allocates them.
  char *allocate(hsa_amd_memory_pool_t Pool, size_t Size) {
    void *Ptr = nullptr;
    EXPECT_EQ(hsa_amd_memory_pool_allocate(Pool, Size, 0, &Ptr),
              HSA_STATUS_SUCCESS);
    Allocations.push_back(Ptr);
    return static_cast<char *>(Ptr);
  }
  void TearDown() override {
    for (void *Ptr : Allocations)
      EXPECT_EQ(hsa_amd_memory_pool_free(Ptr), HSA_STATUS_SUCCESS);
  }
  ForeignMemoryTy query(int32_t Id, const void *Ptr) {
    auto M = device(Id).queryForeignMemory(Ptr);
    EXPECT_TRUE(bool(M)) << takeErrorMessage(M.takeError());
    return M ? *M : ForeignMemoryTy();
  }

  // Kept in a static and never destroyed, as the C layer keeps the plugin
  // (see AMDGPUTeardownTest).
  static GenericPluginTy *Plugin;
  static AgentPoolsTy Agents;
  std::vector<void *> Allocations;
};

GenericPluginTy *AMDGPUForeignMemoryTest::Plugin = nullptr;
AgentPoolsTy AMDGPUForeignMemoryTest::Agents;

TEST_F(AMDGPUForeignMemoryTest, MemoryOfTheDevicesAgentIsItsOwn) {
  for (int32_t Id : {0, 1}) {
    char *Ptr = allocate(Agents.GpuPools[size_t(Id)], 3 << 20);
    for (const char *At : {Ptr, Ptr + 4096, Ptr + (3 << 20) - 1}) {
      ForeignMemoryTy M = query(Id, At);
      EXPECT_EQ(M.Owner, ForeignMemoryTy::OwnerTy::ThisDevice) << Id;
      EXPECT_EQ(M.Base, Ptr);
      EXPECT_EQ(M.Size, size_t(3) << 20);
    }
    EXPECT_EQ(query(Id, Ptr + 4096).bytesFrom(Ptr + 4096),
              (size_t(3) << 20) - 4096);
  }
}

TEST_F(AMDGPUForeignMemoryTest, MemoryOfTheOtherGpuNamesItsAgentAndDevice) {
  char *Ptr = allocate(Agents.GpuPools[1], 1 << 20);
  ForeignMemoryTy M = query(0, Ptr + 100);
  EXPECT_EQ(M.Owner, ForeignMemoryTy::OwnerTy::Elsewhere);
  EXPECT_EQ(M.OwnerName, "AMD GPU agent 1 (device 1 of the amdgpu plugin)");
  Ptr = allocate(Agents.GpuPools[0], 1 << 20);
  M = query(1, Ptr);
  EXPECT_EQ(M.Owner, ForeignMemoryTy::OwnerTy::Elsewhere);
  EXPECT_EQ(M.OwnerName, "AMD GPU agent 0 (device 0 of the amdgpu plugin)");
}

TEST_F(AMDGPUForeignMemoryTest, HostAndUnknownMemoryIsUnknown) {
  // The CPU's pool (hipHostMalloc).
  char *Host = allocate(Agents.CpuPool, 1 << 20);
  EXPECT_EQ(query(0, Host).Owner, ForeignMemoryTy::OwnerTy::Unknown);
  // Locked host memory.
  std::vector<char> Plain(1 << 16);
  void *Agent = nullptr;
  ASSERT_EQ(hsa_amd_memory_lock(Plain.data(), Plain.size(), nullptr, 0,
                                &Agent),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(query(0, Plain.data()).Owner, ForeignMemoryTy::OwnerTy::Unknown);
  EXPECT_EQ(query(0, Agent).Owner, ForeignMemoryTy::OwnerTy::Unknown);
  ASSERT_EQ(hsa_amd_memory_unlock(Plain.data()), HSA_STATUS_SUCCESS);
  // Memory the runtime never saw, and memory it freed.
  EXPECT_EQ(query(0, Plain.data()).Owner, ForeignMemoryTy::OwnerTy::Unknown);
  void *Freed = nullptr;
  ASSERT_EQ(hsa_amd_memory_pool_allocate(Agents.GpuPools[0], 4096, 0, &Freed),
            HSA_STATUS_SUCCESS);
  ASSERT_EQ(hsa_amd_memory_pool_free(Freed), HSA_STATUS_SUCCESS);
  EXPECT_EQ(query(0, Freed).Owner, ForeignMemoryTy::OwnerTy::Unknown);
}

TEST_F(AMDGPUForeignMemoryTest, OneBytePastTheAllocationIsNotItsOwn) {
  char *Ptr = allocate(Agents.GpuPools[0], 1 << 20);
  ForeignMemoryTy M = query(0, Ptr + (1 << 20));
  // Memory the runtime does not know, or another allocation that happens
  // to follow: never this one.
  EXPECT_TRUE(M.Owner != ForeignMemoryTy::OwnerTy::ThisDevice ||
              M.Base != Ptr);
}

} // namespace

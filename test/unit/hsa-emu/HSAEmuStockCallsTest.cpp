// SPDX-License-Identifier: Apache-2.0
//
// The calls of the HSA emulation that LLVM 16's own amdgpu plugin resolves
// and ours does not use: the HSA 1.0 code object API (deserialise, create,
// load, validate, iterate symbols, destroy) on a real gfx90a code object
// and on bad ones; hsa_memory_copy between device memory, the agent address
// of locked memory and plain host memory; the memory-pool flags of the
// group segment (0, as ROCr answers); and the system event handlers, which
// receive a GPU memory fault when a copy runs off the end of a locked range.
// The agent attribute LLVM 17's and 18's plugins add: the GPU's timestamp
// frequency.
#include "HSAEmuFixture.h"

#include <fstream>
#include <iterator>
#include <string>

using namespace offloadio::test;

namespace {

[[maybe_unused]] const bool EnvSet = (setEmuEnv("abort"), true);

class HSAEmuStockCallsTest : public HSAEmuTest {
protected:
  /// The code object EmuKernel.c, built for gfx90a.
  static std::string kernelObject() {
    std::ifstream In(OFFLOADIO_EMU_KERNEL, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(In), {});
  }
};

TEST_F(HSAEmuStockCallsTest, CodeObjectLoadsThroughTheHsa10Calls) {
  std::string Bytes = kernelObject();
  ASSERT_GT(Bytes.size(), 64u) << "no code object at " OFFLOADIO_EMU_KERNEL;
  hsa_code_object_t Code{0};
  ASSERT_EQ(hsa_code_object_deserialize(Bytes.data(), Bytes.size(), "", &Code),
            HSA_STATUS_SUCCESS);
  hsa_executable_t Exec{0};
  ASSERT_EQ(hsa_executable_create(HSA_PROFILE_BASE,
                                  HSA_EXECUTABLE_STATE_UNFROZEN, "", &Exec),
            HSA_STATUS_SUCCESS);
  ASSERT_EQ(hsa_executable_load_code_object(Exec, Gpus[0], Code, ""),
            HSA_STATUS_SUCCESS);
  ASSERT_EQ(hsa_executable_freeze(Exec, ""), HSA_STATUS_SUCCESS);
  uint32_t Result = 1;
  EXPECT_EQ(hsa_executable_validate(Exec, &Result), HSA_STATUS_SUCCESS);
  EXPECT_EQ(Result, 0u);

  // Every symbol, as the stock plugin's image loader walks them.
  struct SeenTy {
    bool Kernel = false, Global = false;
  } Seen;
  ASSERT_EQ(hsa_executable_iterate_symbols(
                Exec,
                [](hsa_executable_t, hsa_executable_symbol_t S, void *Data) {
                  auto *Seen = static_cast<SeenTy *>(Data);
                  uint32_t Len = 0;
                  hsa_executable_symbol_get_info(
                      S, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &Len);
                  std::string Name(Len, '\0');
                  hsa_executable_symbol_get_info(
                      S, HSA_EXECUTABLE_SYMBOL_INFO_NAME, Name.data());
                  hsa_symbol_kind_t Kind;
                  hsa_executable_symbol_get_info(
                      S, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &Kind);
                  if (Name == "emu_kernel.kd" && Kind == HSA_SYMBOL_KIND_KERNEL)
                    Seen->Kernel = true;
                  if (Name == "EmuGlobal" && Kind == HSA_SYMBOL_KIND_VARIABLE)
                    Seen->Global = true;
                  return HSA_STATUS_SUCCESS;
                },
                &Seen),
            HSA_STATUS_SUCCESS);
  EXPECT_TRUE(Seen.Kernel);
  EXPECT_TRUE(Seen.Global);

  // The global was loaded with its initial values, readable with
  // hsa_memory_copy (as the stock plugin reads its device environment).
  hsa_executable_symbol_t Global;
  ASSERT_EQ(hsa_executable_get_symbol_by_name(Exec, "EmuGlobal", &Gpus[0],
                                              &Global),
            HSA_STATUS_SUCCESS);
  uint64_t Address = 0;
  ASSERT_EQ(hsa_executable_symbol_get_info(
                Global, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &Address),
            HSA_STATUS_SUCCESS);
  int Values[4] = {0, 0, 0, 0};
  ASSERT_EQ(hsa_memory_copy(Values, reinterpret_cast<void *>(Address),
                            sizeof(Values)),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(Values[0], 1);
  EXPECT_EQ(Values[3], 4);

  EXPECT_EQ(hsa_executable_destroy(Exec), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_code_object_destroy(Code), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_code_object_destroy(Code), HSA_STATUS_ERROR_INVALID_CODE_OBJECT)
      << "a code object destroyed twice";
}

TEST_F(HSAEmuStockCallsTest, BadCodeObjectsAndExecutablesAreRefused) {
  char NotElf[64] = "not an ELF file";
  hsa_code_object_t Code{0};
  EXPECT_EQ(hsa_code_object_deserialize(NotElf, sizeof(NotElf), "", &Code),
            HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  EXPECT_EQ(hsa_code_object_deserialize(nullptr, 64, "", &Code),
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_executable_t Exec{0};
  EXPECT_EQ(hsa_executable_create(HSA_PROFILE_BASE,
                                  HSA_EXECUTABLE_STATE_UNFROZEN, "", nullptr),
            HSA_STATUS_ERROR_INVALID_ARGUMENT);

  // A frozen executable takes no code object; an unknown code object
  // handle is refused.
  std::string Bytes = kernelObject();
  ASSERT_EQ(hsa_code_object_deserialize(Bytes.data(), Bytes.size(), "", &Code),
            HSA_STATUS_SUCCESS);
  ASSERT_EQ(hsa_executable_create(HSA_PROFILE_BASE,
                                  HSA_EXECUTABLE_STATE_FROZEN, "", &Exec),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_executable_load_code_object(Exec, Gpus[0], Code, ""),
            HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
  EXPECT_EQ(hsa_executable_load_code_object(Exec, Gpus[0],
                                            hsa_code_object_t{12345}, ""),
            HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  // The CPU agent runs no code objects.
  hsa_executable_t Open{0};
  ASSERT_EQ(hsa_executable_create(HSA_PROFILE_BASE,
                                  HSA_EXECUTABLE_STATE_UNFROZEN, "", &Open),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_executable_load_code_object(Open, Cpu, Code, ""),
            HSA_STATUS_ERROR_INVALID_AGENT);
  EXPECT_EQ(hsa_executable_validate(Open, nullptr),
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hsa_executable_destroy(Open), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_executable_destroy(Exec), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_code_object_destroy(Code), HSA_STATUS_SUCCESS);
}

TEST_F(HSAEmuStockCallsTest, MemoryCopyBetweenEveryKindOfMemory) {
  const size_t N = 3 * 4096 + 5;
  std::vector<unsigned char> Host(N), Back(N);
  for (size_t I = 0; I < N; ++I)
    Host[I] = static_cast<unsigned char>(I * 11 + 3);
  void *Device = deviceMemory(N);
  std::vector<unsigned char> Locked(N);
  void *Agent = lock(Locked.data(), N);
  // Plain host -> device -> agent address of locked memory -> plain host.
  ASSERT_EQ(hsa_memory_copy(Device, Host.data(), N), HSA_STATUS_SUCCESS);
  ASSERT_EQ(hsa_memory_copy(Agent, Device, N), HSA_STATUS_SUCCESS);
  EXPECT_EQ(std::memcmp(Locked.data(), Host.data(), N), 0)
      << "a copy to the agent address lands in the locked host pages";
  ASSERT_EQ(hsa_memory_copy(Back.data(), Agent, N), HSA_STATUS_SUCCESS);
  EXPECT_EQ(Back, Host);
  EXPECT_EQ(hsa_memory_copy(nullptr, Host.data(), N),
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hsa_amd_memory_unlock(Locked.data()), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_amd_memory_pool_free(Device), HSA_STATUS_SUCCESS);
}

TEST_F(HSAEmuStockCallsTest, GroupSegmentPoolFlagsAreZeroAsRocrAnswers) {
  int GroupPools = 0;
  ASSERT_EQ(hsa_amd_agent_iterate_memory_pools(
                Gpus[0],
                [](hsa_amd_memory_pool_t P, void *Data) {
                  hsa_amd_segment_t Segment;
                  hsa_amd_memory_pool_get_info(
                      P, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &Segment);
                  if (Segment != HSA_AMD_SEGMENT_GROUP)
                    return HSA_STATUS_SUCCESS;
                  uint32_t Flags = 0xdead;
                  EXPECT_EQ(hsa_amd_memory_pool_get_info(
                                P, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
                                &Flags),
                            HSA_STATUS_SUCCESS);
                  EXPECT_EQ(Flags, 0u);
                  ++*static_cast<int *>(Data);
                  return HSA_STATUS_SUCCESS;
                },
                &GroupPools),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(GroupPools, 1);
}

TEST_F(HSAEmuStockCallsTest, ACopyOffALockedRangeIsAMemoryFaultEvent) {
  EXPECT_EQ(hsa_amd_register_system_event_handler(nullptr, nullptr),
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  struct FaultsTy {
    std::atomic<int> Count{0};
    std::atomic<uint64_t> Address{0}, Agent{0};
    std::atomic<uint32_t> Reasons{0};
  } Faults;
  ASSERT_EQ(hsa_amd_register_system_event_handler(
                [](const hsa_amd_event_t *Event, void *Data) {
                  auto *F = static_cast<FaultsTy *>(Data);
                  if (Event->event_type == HSA_AMD_GPU_MEMORY_FAULT_EVENT) {
                    F->Address = Event->memory_fault.virtual_address;
                    F->Agent = Event->memory_fault.agent.handle;
                    F->Reasons = Event->memory_fault.fault_reason_mask;
                    ++F->Count;
                  }
                  return HSA_STATUS_SUCCESS;
                },
                &Faults),
            HSA_STATUS_SUCCESS);
  std::vector<char> Host(8192);
  char *Agent = static_cast<char *>(lock(Host.data(), 4096));
  void *Device = deviceMemory(8192);
  // 8 KiB from a 4 KiB lock: the engine runs off the end of the mapping.
  EXPECT_EQ(copy(Device, Agent, 8192), -1);
  EXPECT_EQ(Faults.Count.load(), 1);
  EXPECT_EQ(Faults.Address.load(), reinterpret_cast<uint64_t>(Agent) + 4096);
  EXPECT_EQ(Faults.Agent.load(), Gpus[0].handle);
  EXPECT_EQ(Faults.Reasons.load(),
            uint32_t(HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT));
  // Inside the lock nothing faults.
  EXPECT_EQ(copy(Device, Agent, 4096), 0);
  EXPECT_EQ(Faults.Count.load(), 1);
  EXPECT_EQ(hsa_amd_memory_unlock(Host.data()), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_amd_memory_pool_free(Device), HSA_STATUS_SUCCESS);
}

TEST_F(HSAEmuStockCallsTest, GpusAnswerTheirTimestampFrequency) {
  // HSA_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY, a uint64_t in Hz (1-400 MHz).
  const auto Attribute = hsa_agent_info_t(0xA016);
  for (hsa_agent_t G : Gpus) {
    uint64_t Frequency = 0;
    ASSERT_EQ(hsa_agent_get_info(G, Attribute, &Frequency), HSA_STATUS_SUCCESS);
    EXPECT_EQ(Frequency, 25000000u) << "gfx90a's steady counter";
  }
  uint64_t Untouched = 7;
  EXPECT_EQ(hsa_agent_get_info(Cpu, Attribute, &Untouched),
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Untouched, 7u);
}

} // namespace

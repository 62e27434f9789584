// SPDX-License-Identifier: Apache-2.0
//
// Test helper for the HSA emulation (test/hsa-emu), linked into the tests
// as the libhsa-runtime64.so.1 they call: a fixture that initialises the
// runtime and finds its agents and pools, and small helpers for signals,
// memory and AQL packets.
//
// The emulation reads its settings (HSA_EMU_*) at the first hsa_init of a
// process. Each test binary fixes them before main (setEmuEnv), and death
// tests run "threadsafe": the child is a fresh process that runs the test
// from its start, so a fixture may also set a variable before the child's
// first hsa_init.
#ifndef OFFLOADIO_TEST_HSAEMUFIXTURE_H
#define OFFLOADIO_TEST_HSAEMUFIXTURE_H

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include "gtest/gtest.h"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace offloadio {
namespace test {

/// Long enough for any emulator thread to act, short enough that a check
/// that failed to fire ends the test instead of hanging it.
constexpr uint64_t EmuTimeoutNs = uint64_t(10) * 1000 * 1000 * 1000;

/// Fix the emulation's settings for this process: \p Misuse for
/// HSA_EMU_MISUSE, \p NumGpus GPU agents, every other variable at its
/// default.
inline void setEmuEnv(const char *Misuse, unsigned NumGpus = 2) {
  for (const char *Name :
       {"HSA_EMU_STRICT", "HSA_EMU_DISPATCH", "HSA_EMU_QUEUE_ERRORS",
        "HSA_EMU_TRACE", "HSA_EMU_AIS", "HSA_EMU_GPU_MEMORY",
        "HSA_EMU_HOST_MEMORY", "HSA_EMU_GPU_ARCH"})
    unsetenv(Name);
  setenv("HSA_EMU_NUM_GPUS", std::to_string(NumGpus).c_str(), 1);
  setenv("HSA_EMU_MISUSE", Misuse, 1);
}

/// Initialises the runtime for each test and finds the CPU agent, two GPU
/// agents, the CPU's kernarg (fine-grained) pool and each GPU's device pool.
class HSAEmuTest : public ::testing::Test {
protected:
  void SetUp() override {
    // A fresh process per death test, not a fork of this one: its emulator
    // threads, and its settings, read once by its first hsa_init.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    ASSERT_EQ(hsa_init(), HSA_STATUS_SUCCESS);
    ASSERT_EQ(hsa_iterate_agents(
                  [](hsa_agent_t A, void *Data) {
                    auto *T = static_cast<HSAEmuTest *>(Data);
                    hsa_device_type_t Type;
                    hsa_agent_get_info(A, HSA_AGENT_INFO_DEVICE, &Type);
                    if (Type == HSA_DEVICE_TYPE_CPU)
                      T->Cpu = A;
                    else
                      T->Gpus.push_back(A);
                    return HSA_STATUS_SUCCESS;
                  },
                  this),
              HSA_STATUS_SUCCESS);
    ASSERT_EQ(Gpus.size(), 2u);
    HostPool = firstPool(Cpu);
    for (hsa_agent_t G : Gpus)
      DevicePools.push_back(firstPool(G));
  }
  void TearDown() override { EXPECT_EQ(hsa_shut_down(), HSA_STATUS_SUCCESS); }

  /// The first pool of \p Agent: the CPU's fine-grained kernarg pool, a
  /// GPU's device memory.
  static hsa_amd_memory_pool_t firstPool(hsa_agent_t Agent) {
    hsa_amd_memory_pool_t Pool{0};
    hsa_amd_agent_iterate_memory_pools(
        Agent,
        [](hsa_amd_memory_pool_t P, void *Data) {
          *static_cast<hsa_amd_memory_pool_t *>(Data) = P;
          return HSA_STATUS_INFO_BREAK;
        },
        &Pool);
    return Pool;
  }

  /// A new signal at \p Value.
  static hsa_signal_t signal(hsa_signal_value_t Value = 1) {
    hsa_signal_t S{0};
    EXPECT_EQ(hsa_signal_create(Value, 0, nullptr, &S), HSA_STATUS_SUCCESS);
    return S;
  }
  /// A signal created and destroyed at once.
  static hsa_signal_t destroyedSignal() {
    hsa_signal_t S = signal();
    EXPECT_EQ(hsa_signal_destroy(S), HSA_STATUS_SUCCESS);
    return S;
  }
  /// Wait (bounded) until \p S drops below 1; returns its value.
  static hsa_signal_value_t waitDone(hsa_signal_t S) {
    return hsa_signal_wait_scacquire(S, HSA_SIGNAL_CONDITION_LT, 1,
                                     EmuTimeoutNs, HSA_WAIT_STATE_BLOCKED);
  }

  /// \p Size bytes of device memory of GPU \p Gpu.
  void *deviceMemory(size_t Size, unsigned Gpu = 0) {
    void *P = nullptr;
    EXPECT_EQ(hsa_amd_memory_pool_allocate(DevicePools[Gpu], Size, 0, &P),
              HSA_STATUS_SUCCESS);
    return P;
  }
  /// \p Size bytes of the CPU's fine-grained pool, which every GPU may
  /// access.
  void *hostMemory(size_t Size) {
    void *P = nullptr;
    EXPECT_EQ(hsa_amd_memory_pool_allocate(HostPool, Size, 0, &P),
              HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_amd_agents_allow_access(uint32_t(Gpus.size()), Gpus.data(),
                                          nullptr, P),
              HSA_STATUS_SUCCESS);
    return P;
  }
  /// Lock \p Size bytes at \p Host for every GPU; returns the agent address.
  void *lock(void *Host, size_t Size) {
    void *Agent = nullptr;
    EXPECT_EQ(
        hsa_amd_memory_lock(Host, Size, Gpus.data(), int(Gpus.size()), &Agent),
        HSA_STATUS_SUCCESS);
    return Agent;
  }
  /// Copy \p Size bytes by GPU 0's engine; returns the completion's value.
  hsa_signal_value_t copy(void *Dst, const void *Src, size_t Size,
                          bool DstOnGpu = true) {
    hsa_signal_t Done = signal();
    EXPECT_EQ(hsa_amd_memory_async_copy(Dst, DstOnGpu ? Gpus[0] : Cpu, Src,
                                        DstOnGpu ? Cpu : Gpus[0], Size, 0,
                                        nullptr, Done),
              HSA_STATUS_SUCCESS);
    hsa_signal_value_t V = waitDone(Done);
    EXPECT_EQ(hsa_signal_destroy(Done), HSA_STATUS_SUCCESS);
    return V;
  }

  /// A queue of 64 packets on GPU 0.
  hsa_queue_t *queue() {
    hsa_queue_t *Q = nullptr;
    EXPECT_EQ(hsa_queue_create(Gpus[0], 64, HSA_QUEUE_TYPE_MULTI, nullptr,
                               nullptr, UINT32_MAX, UINT32_MAX, &Q),
              HSA_STATUS_SUCCESS);
    return Q;
  }
  /// Submit a barrier-AND packet on \p Q that waits for \p Deps and then
  /// completes \p Completion, as a client writes one: slot, body, header
  /// last, doorbell.
  static void submitBarrier(hsa_queue_t *Q, std::vector<hsa_signal_t> Deps,
                            hsa_signal_t Completion) {
    uint64_t Index = hsa_queue_add_write_index_relaxed(Q, 1);
    auto *Packet =
        reinterpret_cast<hsa_barrier_and_packet_t *>(Q->base_address) +
        Index % Q->size;
    std::memset(reinterpret_cast<char *>(Packet) + 4, 0, sizeof(*Packet) - 4);
    for (size_t I = 0; I < Deps.size() && I < 5; ++I)
      Packet->dep_signal[I] = Deps[I];
    Packet->completion_signal = Completion;
    uint16_t Header = (HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) |
                      (1 << HSA_PACKET_HEADER_BARRIER);
    __atomic_store_n(&Packet->header, Header, __ATOMIC_RELEASE);
    hsa_signal_store_screlease(Q->doorbell_signal, hsa_signal_value_t(Index));
  }

  /// Give emulator threads time to act on a misuse that kills the process
  /// (a death test's statement); returns if none did.
  static void letEmulatorAct() {
    std::this_thread::sleep_for(std::chrono::seconds(10));
  }

  hsa_agent_t Cpu{0};
  std::vector<hsa_agent_t> Gpus;
  hsa_amd_memory_pool_t HostPool{0};
  std::vector<hsa_amd_memory_pool_t> DevicePools;
};

} // namespace test
} // namespace offloadio

#endif // OFFLOADIO_TEST_HSAEMUFIXTURE_H

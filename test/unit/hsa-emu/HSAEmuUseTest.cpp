// SPDX-License-Identifier: Apache-2.0
//
// Correct use of the HSA emulation passes its checks on callers: with
// HSA_EMU_MISUSE=abort and HSA_EMU_STRICT on (the defaults), any false
// positive would abort the test. Signals created, waited on (also by other
// threads, async handlers, copies and packets) and destroyed once; queues
// created, used and destroyed; pool memory allocated and freed, free(NULL);
// copies between device memory, pool host memory and the agent address of
// locked memory, and fills of each.
#include "HSAEmuFixture.h"

#include <atomic>
#include <thread>

using namespace offloadio::test;

namespace {

[[maybe_unused]] const bool EnvSet = (setEmuEnv("abort"), true);

class HSAEmuUseTest : public HSAEmuTest {};

TEST_F(HSAEmuUseTest, SignalLifecycle) {
  hsa_signal_t S = signal(3);
  EXPECT_EQ(hsa_signal_load_relaxed(S), 3);
  hsa_signal_subtract_scacq_screl(S, 1);
  hsa_signal_add_relaxed(S, 2);
  EXPECT_EQ(hsa_signal_cas_scacquire(S, 4, 7), 4);
  EXPECT_EQ(hsa_signal_exchange_relaxed(S, 1), 7);
  // A wait that times out returns the value it saw.
  EXPECT_EQ(hsa_signal_wait_relaxed(S, HSA_SIGNAL_CONDITION_EQ, 0, 1000000,
                                    HSA_WAIT_STATE_BLOCKED),
            1);
  std::thread Producer([S] { hsa_signal_store_screlease(S, 0); });
  EXPECT_EQ(waitDone(S), 0);
  Producer.join();
  EXPECT_EQ(hsa_signal_destroy(S), HSA_STATUS_SUCCESS);
}

TEST_F(HSAEmuUseTest, AsyncHandlerRunsAndItsSignalIsDestroyedAfter) {
  hsa_signal_t S = signal(1);
  hsa_signal_t Ran = signal(1);
  ASSERT_EQ(hsa_amd_signal_async_handler(
                S, HSA_SIGNAL_CONDITION_EQ, 0,
                [](hsa_signal_value_t, void *Arg) {
                  hsa_signal_store_screlease(*static_cast<hsa_signal_t *>(Arg),
                                             0);
                  return false;
                },
                &Ran),
            HSA_STATUS_SUCCESS);
  hsa_signal_store_screlease(S, 0);
  // Destroyed once its condition held, perhaps before the handler ran: the
  // handler still runs.
  EXPECT_EQ(hsa_signal_destroy(S), HSA_STATUS_SUCCESS);
  EXPECT_EQ(waitDone(Ran), 0);
  EXPECT_EQ(hsa_signal_destroy(Ran), HSA_STATUS_SUCCESS);
}

TEST_F(HSAEmuUseTest, WaitAnyOnLiveSignals) {
  hsa_signal_t List[2] = {signal(1), signal(0)};
  hsa_signal_condition_t Conds[2] = {HSA_SIGNAL_CONDITION_EQ,
                                     HSA_SIGNAL_CONDITION_EQ};
  hsa_signal_value_t Values[2] = {0, 0};
  hsa_signal_value_t Seen = -1;
  EXPECT_EQ(hsa_amd_signal_wait_any(2, List, Conds, Values, EmuTimeoutNs,
                                    HSA_WAIT_STATE_BLOCKED, &Seen),
            1u);
  EXPECT_EQ(Seen, 0);
  for (hsa_signal_t S : List)
    EXPECT_EQ(hsa_signal_destroy(S), HSA_STATUS_SUCCESS);
}

TEST_F(HSAEmuUseTest, QueueLifecycleWithBarrierPackets) {
  hsa_queue_t *Q = queue();
  ASSERT_NE(Q, nullptr);
  hsa_signal_t Dep = signal(1);
  hsa_signal_t First = signal(1);
  hsa_signal_t Second = signal(1);
  submitBarrier(Q, {Dep}, First);
  submitBarrier(Q, {First}, Second);
  hsa_signal_store_screlease(Dep, 0);
  EXPECT_EQ(waitDone(Second), 0);
  EXPECT_EQ(hsa_signal_load_scacquire(First), 0);
  // The read index moves on after the completion signal: at most 2.
  EXPECT_LE(hsa_queue_load_read_index_scacquire(Q), 2u);
  EXPECT_EQ(hsa_queue_load_write_index_relaxed(Q), 2u);
  // Every packet is complete: its signals may go.
  for (hsa_signal_t S : {Dep, First, Second})
    EXPECT_EQ(hsa_signal_destroy(S), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_queue_destroy(Q), HSA_STATUS_SUCCESS);
  // A new queue works after an old one was destroyed.
  hsa_queue_t *Next = queue();
  hsa_signal_t Done = signal(1);
  submitBarrier(Next, {}, Done);
  EXPECT_EQ(waitDone(Done), 0);
  EXPECT_EQ(hsa_signal_destroy(Done), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_queue_destroy(Next), HSA_STATUS_SUCCESS);
}

TEST_F(HSAEmuUseTest, PoolAllocateFreeAndFreeNull) {
  for (int Round = 0; Round < 3; ++Round) {
    void *Dev = deviceMemory(1 << 20);
    void *Host = hostMemory(4096);
    EXPECT_EQ(hsa_amd_memory_pool_free(Dev), HSA_STATUS_SUCCESS);
    EXPECT_EQ(hsa_amd_memory_pool_free(Host), HSA_STATUS_SUCCESS);
  }
  // As in ROCr: freeing null succeeds.
  EXPECT_EQ(hsa_amd_memory_pool_free(nullptr), HSA_STATUS_SUCCESS);
}

TEST_F(HSAEmuUseTest, CopiesBetweenLockedAgentAddressesAndDeviceMemory) {
  constexpr size_t Size = 3 * 4096 + 100;
  std::vector<char> In(Size), Out(Size, 0);
  for (size_t I = 0; I < Size; ++I)
    In[I] = char(I * 7 + 1);
  void *InAgent = lock(In.data(), Size);
  void *OutAgent = lock(Out.data(), Size);
  void *Dev0 = deviceMemory(Size, 0);
  void *Dev1 = deviceMemory(Size, 1);
  // GPU 0's engine may reach GPU 1's memory once granted.
  hsa_agent_t Gpu0 = Gpus[0];
  ASSERT_EQ(hsa_amd_agents_allow_access(1, &Gpu0, nullptr, Dev1),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(copy(Dev0, InAgent, Size), 0);
  hsa_signal_t Done = signal();
  ASSERT_EQ(hsa_amd_memory_async_copy(Dev1, Gpus[0], Dev0, Gpus[0], Size, 0,
                                      nullptr, Done),
            HSA_STATUS_SUCCESS);
  // Device to host, chained on the device-to-device copy.
  hsa_signal_t Back = signal();
  ASSERT_EQ(hsa_amd_memory_async_copy(OutAgent, Cpu, Dev1, Gpus[0], Size, 1,
                                      &Done, Back),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(waitDone(Back), 0);
  EXPECT_EQ(Out, In);
  for (hsa_signal_t S : {Done, Back})
    EXPECT_EQ(hsa_signal_destroy(S), HSA_STATUS_SUCCESS);
  // Pool host memory is agent-accessible once allowed.
  void *Host = hostMemory(Size);
  EXPECT_EQ(copy(Host, Dev0, Size, /*DstOnGpu=*/false), 0);
  EXPECT_EQ(std::memcmp(Host, In.data(), Size), 0);
  EXPECT_EQ(hsa_amd_memory_unlock(In.data()), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_amd_memory_unlock(Out.data()), HSA_STATUS_SUCCESS);
  for (void *P : {Dev0, Dev1, Host})
    EXPECT_EQ(hsa_amd_memory_pool_free(P), HSA_STATUS_SUCCESS);
}

TEST_F(HSAEmuUseTest, FillsOfDeviceAndLockedMemory) {
  void *Dev = deviceMemory(4096);
  EXPECT_EQ(hsa_amd_memory_fill(Dev, 0x01020304u, 1024), HSA_STATUS_SUCCESS);
  EXPECT_EQ(static_cast<uint32_t *>(Dev)[1023], 0x01020304u);
  std::vector<uint32_t> Host(1024, 0);
  void *Agent = lock(Host.data(), Host.size() * 4);
  // ROCr fills locked memory by its agent address or its host address.
  EXPECT_EQ(hsa_amd_memory_fill(Agent, 5, 512), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_amd_memory_fill(Host.data() + 512, 6, 512), HSA_STATUS_SUCCESS);
  EXPECT_EQ(Host[0], 5u);
  EXPECT_EQ(Host[1023], 6u);
  EXPECT_EQ(hsa_amd_memory_unlock(Host.data()), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_amd_memory_pool_free(Dev), HSA_STATUS_SUCCESS);
}

TEST_F(HSAEmuUseTest, HostToHostCopiesNeedNoLock) {
  // No GPU engine: ROCr copies with the CPU, which reaches any host memory.
  std::vector<char> Src(4096, 'y'), Dst(4096, 0);
  hsa_signal_t Done = signal();
  ASSERT_EQ(hsa_amd_memory_async_copy(Dst.data(), Cpu, Src.data(), Cpu, 4096, 0,
                                      nullptr, Done),
            HSA_STATUS_SUCCESS);
  EXPECT_EQ(waitDone(Done), 0);
  EXPECT_EQ(Dst, Src);
  EXPECT_EQ(hsa_signal_destroy(Done), HSA_STATUS_SUCCESS);
}

} // namespace

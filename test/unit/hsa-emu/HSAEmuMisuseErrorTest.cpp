// SPDX-License-Identifier: Apache-2.0
//
// The HSA emulation's checks on its callers with HSA_EMU_MISUSE=error: each
// misuse still prints its "hsa-emu: misuse:" line, then the call returns
// what ROCr returns (HSA_STATUS_ERROR_INVALID_SIGNAL, _INVALID_QUEUE,
// _INVALID_ALLOCATION, _INVALID_ARGUMENT for a null handle), and calls that
// have no status change nothing and return -1 (signal values) or
// UINT64_MAX (queue indices); a copy the engine cannot reach, or whose
// dependency was destroyed, completes with -1.
#include "HSAEmuFixture.h"

#include "ScopedEnv.h"

#include <algorithm>
#include <string>

using namespace offloadio::test;

namespace {

[[maybe_unused]] const bool EnvSet = (setEmuEnv("error"), true);

class HSAEmuMisuseErrorTest : public HSAEmuTest {
protected:
  /// Run \p Fn with stderr captured and check that it printed exactly one
  /// misuse line of \p Call containing \p What; returns what \p Fn returns.
  template <typename FnTy>
  auto reported(const std::string &Call, const std::string &What, FnTy Fn) {
    std::string Stderr;
    auto Result = ScopedEnvTy::captured(Fn, Stderr);
    EXPECT_TRUE(contains(Stderr, "hsa-emu: misuse: " + Call + ": "));
    EXPECT_TRUE(contains(Stderr, What));
    EXPECT_EQ(std::count(Stderr.begin(), Stderr.end(), '\n'), 1) << Stderr;
    return Result;
  }
};

TEST_F(HSAEmuMisuseErrorTest, DestroyedSignalsGiveInvalidSignal) {
  hsa_signal_t S = destroyedSignal();
  EXPECT_EQ(reported("hsa_signal_destroy",
                     "was destroyed (by hsa_signal_destroy)",
                     [&] { return hsa_signal_destroy(S); }),
            HSA_STATUS_ERROR_INVALID_SIGNAL);
  EXPECT_EQ(reported("hsa_amd_signal_async_handler", "was destroyed",
                     [&] {
                       return hsa_amd_signal_async_handler(
                           S, HSA_SIGNAL_CONDITION_EQ, 0,
                           [](hsa_signal_value_t, void *) { return false; },
                           nullptr);
                     }),
            HSA_STATUS_ERROR_INVALID_SIGNAL);
  void *Dev = deviceMemory(4096);
  void *Host = hostMemory(4096);
  hsa_signal_t Done = signal();
  EXPECT_EQ(reported("hsa_amd_memory_async_copy", "was destroyed",
                     [&] {
                       return hsa_amd_memory_async_copy(Dev, Gpus[0], Host, Cpu,
                                                        4096, 1, &S, Done);
                     }),
            HSA_STATUS_ERROR_INVALID_SIGNAL);
  EXPECT_EQ(reported("hsa_amd_memory_async_copy", "was destroyed",
                     [&] {
                       return hsa_amd_memory_async_copy(Dev, Gpus[0], Host, Cpu,
                                                        4096, 0, nullptr, S);
                     }),
            HSA_STATUS_ERROR_INVALID_SIGNAL);
  // Nothing was submitted.
  EXPECT_EQ(hsa_signal_load_relaxed(Done), 1);
}

TEST_F(HSAEmuMisuseErrorTest, NullSignalHandlesGiveInvalidArgument) {
  EXPECT_EQ(reported("hsa_signal_destroy", "signal 0x0 is the null handle",
                     [] { return hsa_signal_destroy(hsa_signal_t{0}); }),
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  void *Dev = deviceMemory(4096);
  void *Host = hostMemory(4096);
  EXPECT_EQ(reported("hsa_amd_memory_async_copy", "the null handle",
                     [&] {
                       return hsa_amd_memory_async_copy(Dev, Gpus[0], Host, Cpu,
                                                        4096, 0, nullptr,
                                                        hsa_signal_t{0});
                     }),
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

TEST_F(HSAEmuMisuseErrorTest, DestroyedSignalValuesAreMinusOne) {
  hsa_signal_t S = destroyedSignal();
  EXPECT_EQ(reported("hsa_signal_load_scacquire", "was destroyed",
                     [&] { return hsa_signal_load_scacquire(S); }),
            -1);
  // Does not block, though the condition never held.
  EXPECT_EQ(reported("hsa_signal_wait_scacquire", "was destroyed",
                     [&] { return waitDone(S); }),
            -1);
  EXPECT_EQ(reported("hsa_signal_exchange_relaxed", "was destroyed",
                     [&] { return hsa_signal_exchange_relaxed(S, 5); }),
            -1);
  reported("hsa_signal_store_relaxed", "was destroyed", [&] {
    hsa_signal_store_relaxed(S, 5);
    return 0;
  });
  hsa_signal_t List[1] = {S};
  hsa_signal_condition_t Cond = HSA_SIGNAL_CONDITION_EQ;
  hsa_signal_value_t Value = 0;
  EXPECT_EQ(reported("hsa_amd_signal_wait_any", "was destroyed",
                     [&] {
                       return hsa_amd_signal_wait_any(
                           1, List, &Cond, &Value, EmuTimeoutNs,
                           HSA_WAIT_STATE_BLOCKED, nullptr);
                     }),
            UINT32_MAX);
}

TEST_F(HSAEmuMisuseErrorTest, DestroyedQueues) {
  hsa_queue_t *Q = queue();
  ASSERT_EQ(hsa_queue_destroy(Q), HSA_STATUS_SUCCESS);
  EXPECT_EQ(reported("hsa_queue_destroy", "was destroyed by hsa_queue_destroy",
                     [&] { return hsa_queue_destroy(Q); }),
            HSA_STATUS_ERROR_INVALID_QUEUE);
  EXPECT_EQ(reported("hsa_queue_inactivate", "was destroyed",
                     [&] { return hsa_queue_inactivate(Q); }),
            HSA_STATUS_ERROR_INVALID_QUEUE);
  EXPECT_EQ(reported("hsa_queue_load_read_index_relaxed", "was destroyed",
                     [&] { return hsa_queue_load_read_index_relaxed(Q); }),
            UINT64_MAX);
  EXPECT_EQ(reported("hsa_queue_add_write_index_scacquire", "was destroyed",
                     [&] { return hsa_queue_add_write_index_scacquire(Q, 1); }),
            UINT64_MAX);
}

TEST_F(HSAEmuMisuseErrorTest, PacketWithDestroyedDependencyFails) {
  hsa_queue_t *Q = queue();
  hsa_signal_t Dead = destroyedSignal();
  hsa_signal_t Done = signal(1);
  std::string Stderr;
  ScopedEnvTy::captured(
      [&] {
        submitBarrier(Q, {Dead}, Done);
        EXPECT_EQ(waitDone(Done), -1);
        return 0;
      },
      Stderr);
  EXPECT_TRUE(contains(Stderr, "barrier-AND dep_signal[0]: signal 0x"));
  EXPECT_EQ(hsa_signal_destroy(Done), HSA_STATUS_SUCCESS);
  EXPECT_EQ(hsa_queue_destroy(Q), HSA_STATUS_SUCCESS);
}

TEST_F(HSAEmuMisuseErrorTest, PoolFreesGiveInvalidAllocation) {
  void *P = deviceMemory(4096);
  ASSERT_EQ(hsa_amd_memory_pool_free(P), HSA_STATUS_SUCCESS);
  EXPECT_EQ(reported("hsa_amd_memory_pool_free", "was already freed",
                     [&] { return hsa_amd_memory_pool_free(P); }),
            HSA_STATUS_ERROR_INVALID_ALLOCATION);
  int OnStack = 0;
  EXPECT_EQ(reported("hsa_amd_memory_pool_free", "was never allocated",
                     [&] { return hsa_amd_memory_pool_free(&OnStack); }),
            HSA_STATUS_ERROR_INVALID_ALLOCATION);
  // Reallocated memory is freeable again.
  void *Again = deviceMemory(4096);
  EXPECT_EQ(hsa_amd_memory_pool_free(Again), HSA_STATUS_SUCCESS);
}

TEST_F(HSAEmuMisuseErrorTest, UnreachableCopiesCompleteWithMinusOne) {
  void *Dev = deviceMemory(4096);
  std::vector<char> Host(4096, 'z');
  EXPECT_EQ(reported("hsa_amd_memory_async_copy",
                     "source neither a pool allocation nor locked memory",
                     [&] { return copy(Dev, Host.data(), Host.size()); }),
            -1);
  EXPECT_EQ(reported("hsa_amd_memory_fill",
                     "neither a pool allocation nor locked memory",
                     [&] { return hsa_amd_memory_fill(Host.data(), 0, 1024); }),
            HSA_STATUS_ERROR_INVALID_ALLOCATION);
  EXPECT_EQ(Host[0], 'z');
}

TEST_F(HSAEmuMisuseErrorTest, CopyWhoseDependencyIsDestroyedFails) {
  void *Dev = deviceMemory(4096);
  void *Host = hostMemory(4096);
  hsa_signal_t Dep = signal(1);
  hsa_signal_t Done = signal(1);
  ASSERT_EQ(
      hsa_amd_memory_async_copy(Dev, Gpus[0], Host, Cpu, 4096, 1, &Dep, Done),
      HSA_STATUS_SUCCESS);
  EXPECT_EQ(reported("hsa_amd_memory_async_copy",
                     "before the copy of 4096 bytes",
                     [&] {
                       EXPECT_EQ(hsa_signal_destroy(Dep), HSA_STATUS_SUCCESS);
                       return waitDone(Done);
                     }),
            -1);
  EXPECT_EQ(hsa_signal_destroy(Done), HSA_STATUS_SUCCESS);
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// The HSA emulation's checks on its callers, in their default mode
// (HSA_EMU_MISUSE=abort): each misuse prints one "hsa-emu: misuse:" line
// naming the call and the handle or pointer, then aborts (death tests):
// signals used after destroy, destroyed twice, never created or null, also
// as copy dependencies and completions, packet signals and async handlers;
// queues used after destroy; pool memory freed twice or never allocated;
// copies and fills of memory the engine cannot reach (HSA_EMU_STRICT, on by
// default). HSAEmuUseTest.cpp checks that correct use passes these checks,
// HSAEmuMisuseErrorTest.cpp the statuses of HSA_EMU_MISUSE=error.
#include "HSAEmuFixture.h"

#include <csignal>
#include <sys/wait.h>
#include <thread>

using namespace offloadio::test;

namespace {

[[maybe_unused]] const bool EnvSet = (setEmuEnv("abort"), true);

/// The start of a misuse line of \p Call (a regex).
std::string misuseOf(const std::string &Call) {
  return "hsa-emu: misuse: " + Call + ": ";
}
const std::string DestroyedSignal =
    "signal 0x[0-9a-f]+ was destroyed \\(by hsa_signal_destroy\\)";

class HSAEmuMisuseTest : public HSAEmuTest {};

//===----------------------------------------------------------------------===//
// Signals
//===----------------------------------------------------------------------===//

TEST_F(HSAEmuMisuseTest, SignalWaitedOnAfterDestroy) {
  hsa_signal_t S = destroyedSignal();
  EXPECT_DEATH(waitDone(S),
               misuseOf("hsa_signal_wait_scacquire") + DestroyedSignal);
  EXPECT_DEATH(hsa_signal_wait_relaxed(S, HSA_SIGNAL_CONDITION_EQ, 0, 1000,
                                       HSA_WAIT_STATE_ACTIVE),
               misuseOf("hsa_signal_wait_relaxed") + DestroyedSignal);
}

TEST_F(HSAEmuMisuseTest, SignalLoadedOrStoredAfterDestroy) {
  hsa_signal_t S = destroyedSignal();
  EXPECT_DEATH(hsa_signal_load_scacquire(S),
               misuseOf("hsa_signal_load_scacquire") + DestroyedSignal);
  EXPECT_DEATH(hsa_signal_load_relaxed(S),
               misuseOf("hsa_signal_load_relaxed") + DestroyedSignal);
  EXPECT_DEATH(hsa_signal_store_screlease(S, 0),
               misuseOf("hsa_signal_store_screlease") + DestroyedSignal);
  EXPECT_DEATH(hsa_signal_silent_store_relaxed(S, 0),
               misuseOf("hsa_signal_silent_store_relaxed") + DestroyedSignal);
}

TEST_F(HSAEmuMisuseTest, SignalReadModifyWriteAfterDestroy) {
  hsa_signal_t S = destroyedSignal();
  EXPECT_DEATH(hsa_signal_add_scacq_screl(S, 1),
               misuseOf("hsa_signal_add_scacq_screl") + DestroyedSignal);
  EXPECT_DEATH(hsa_signal_subtract_relaxed(S, 1),
               misuseOf("hsa_signal_subtract_relaxed") + DestroyedSignal);
  EXPECT_DEATH(hsa_signal_and_screlease(S, 1),
               misuseOf("hsa_signal_and_screlease") + DestroyedSignal);
  EXPECT_DEATH(hsa_signal_exchange_scacquire(S, 1),
               misuseOf("hsa_signal_exchange_scacquire") + DestroyedSignal);
  EXPECT_DEATH(hsa_signal_cas_relaxed(S, 1, 2),
               misuseOf("hsa_signal_cas_relaxed") + DestroyedSignal);
}

TEST_F(HSAEmuMisuseTest, SignalDestroyedTwice) {
  hsa_signal_t S = destroyedSignal();
  EXPECT_DEATH(hsa_signal_destroy(S),
               misuseOf("hsa_signal_destroy") + DestroyedSignal);
}

TEST_F(HSAEmuMisuseTest, SignalNeverCreatedOrNull) {
  int NotASignal = 0;
  hsa_signal_t Bogus{reinterpret_cast<uint64_t>(&NotASignal)};
  EXPECT_DEATH(hsa_signal_load_scacquire(Bogus),
               misuseOf("hsa_signal_load_scacquire") +
                   "0x[0-9a-f]+ is not a signal handle \\(none was created\\)");
  EXPECT_DEATH(hsa_signal_store_relaxed(hsa_signal_t{0}, 1),
               misuseOf("hsa_signal_store_relaxed") +
                   "signal 0x0 is the null handle");
  EXPECT_DEATH(hsa_signal_destroy(hsa_signal_t{0}),
               misuseOf("hsa_signal_destroy") +
                   "signal 0x0 is the null handle");
}

TEST_F(HSAEmuMisuseTest, SignalDestroyedWhileWaitedOn) {
  EXPECT_DEATH(
      {
        hsa_signal_t S = signal(1);
        std::thread Waiter([S] { waitDone(S); });
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        hsa_signal_destroy(S);
        Waiter.join();
      },
      misuseOf("hsa_signal_wait_scacquire") + DestroyedSignal +
          " while this wait on it was pending, at value 1");
}

TEST_F(HSAEmuMisuseTest, SignalWaitAnyOnDestroyed) {
  hsa_signal_t Live = signal(1);
  hsa_signal_t Dead = destroyedSignal();
  hsa_signal_t List[2] = {Live, Dead};
  hsa_signal_condition_t Conds[2] = {HSA_SIGNAL_CONDITION_EQ,
                                     HSA_SIGNAL_CONDITION_EQ};
  hsa_signal_value_t Values[2] = {0, 0};
  EXPECT_DEATH(hsa_amd_signal_wait_any(2, List, Conds, Values, 1000,
                                       HSA_WAIT_STATE_BLOCKED, nullptr),
               misuseOf("hsa_amd_signal_wait_any") + DestroyedSignal);
}

bool neverCalled(hsa_signal_value_t, void *) { return false; }

TEST_F(HSAEmuMisuseTest, AsyncHandlerOnDestroyedSignal) {
  hsa_signal_t S = destroyedSignal();
  EXPECT_DEATH(hsa_amd_signal_async_handler(S, HSA_SIGNAL_CONDITION_EQ, 0,
                                            neverCalled, nullptr),
               misuseOf("hsa_amd_signal_async_handler") + DestroyedSignal);
}

TEST_F(HSAEmuMisuseTest, SignalDestroyedUnderItsAsyncHandler) {
  EXPECT_DEATH(
      {
        hsa_signal_t S = signal(1);
        hsa_amd_signal_async_handler(S, HSA_SIGNAL_CONDITION_EQ, 0, neverCalled,
                                     nullptr);
        hsa_signal_destroy(S);
        letEmulatorAct();
      },
      misuseOf("hsa_amd_signal_async_handler") + DestroyedSignal +
          " at value 1 while handler 0x[0-9a-f]+ \\(arg \\(nil\\)\\) waited "
          "on it: the handler can never run");
}

//===----------------------------------------------------------------------===//
// Signals of copies and packets
//===----------------------------------------------------------------------===//

TEST_F(HSAEmuMisuseTest, CopyWithDestroyedSignals) {
  void *Dev = deviceMemory(4096);
  void *Host = hostMemory(4096);
  hsa_signal_t Dead = destroyedSignal();
  hsa_signal_t Done = signal();
  EXPECT_DEATH(hsa_amd_memory_async_copy(Dev, Gpus[0], Host, Cpu, 4096, 0,
                                         nullptr, Dead),
               misuseOf("hsa_amd_memory_async_copy") + DestroyedSignal);
  EXPECT_DEATH(
      hsa_amd_memory_async_copy(Dev, Gpus[0], Host, Cpu, 4096, 1, &Dead, Done),
      misuseOf("hsa_amd_memory_async_copy") + DestroyedSignal);
}

TEST_F(HSAEmuMisuseTest, CopyDependencyDestroyedBeforeTheCopyRan) {
  void *Dev = deviceMemory(4096);
  void *Host = hostMemory(4096);
  EXPECT_DEATH(
      {
        hsa_signal_t Dep = signal(1);
        hsa_signal_t Done = signal(1);
        hsa_amd_memory_async_copy(Dev, Gpus[0], Host, Cpu, 4096, 1, &Dep, Done);
        hsa_signal_destroy(Dep);
        waitDone(Done);
      },
      misuseOf("hsa_amd_memory_async_copy") +
          "dependency signal 0x[0-9a-f]+ was destroyed \\(by "
          "hsa_signal_destroy\\) at value 1 before the copy of 4096 bytes "
          "from 0x[0-9a-f]+ to 0x[0-9a-f]+ started");
}

TEST_F(HSAEmuMisuseTest, CopyCompletionDestroyedBeforeTheCopyCompleted) {
  void *Dev = deviceMemory(4096);
  void *Host = hostMemory(4096);
  EXPECT_DEATH(
      {
        hsa_signal_t Dep = signal(1);
        hsa_signal_t Done = signal(1);
        hsa_amd_memory_async_copy(Dev, Gpus[0], Host, Cpu, 4096, 1, &Dep, Done);
        hsa_signal_destroy(Done);
        hsa_signal_store_screlease(Dep, 0);
        letEmulatorAct();
      },
      misuseOf("hsa_amd_memory_async_copy") +
          "completion signal 0x[0-9a-f]+ was destroyed \\(by "
          "hsa_signal_destroy\\) before the copy of 4096 bytes");
}

TEST_F(HSAEmuMisuseTest, PacketCompletionSignalDestroyed) {
  hsa_queue_t *Q = queue();
  hsa_signal_t Dead = destroyedSignal();
  EXPECT_DEATH(
      {
        submitBarrier(Q, {}, Dead);
        letEmulatorAct();
      },
      "hsa-emu: misuse: AQL packet 0 of queue 0x[0-9a-f]+ \\(number "
      "[0-9]+\\), completion_signal: " +
          DestroyedSignal);
}

TEST_F(HSAEmuMisuseTest, PacketDependencyDestroyed) {
  hsa_queue_t *Q = queue();
  hsa_signal_t Done = signal(1);
  EXPECT_DEATH(
      {
        hsa_signal_t Live = signal(0);
        submitBarrier(Q, {Live, destroyedSignal()}, Done);
        waitDone(Done);
      },
      "hsa-emu: misuse: AQL packet 0 of queue 0x[0-9a-f]+ \\(number "
      "[0-9]+\\), barrier-AND dep_signal\\[1\\]: " +
          DestroyedSignal);
  EXPECT_DEATH(
      {
        hsa_signal_t Dep = signal(1);
        submitBarrier(Q, {Dep}, Done);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        hsa_signal_destroy(Dep);
        waitDone(Done);
      },
      "barrier-AND dep_signal\\[0\\]: signal 0x[0-9a-f]+ was destroyed \\(by "
      "hsa_signal_destroy\\) at value 1 while the packet waited on it");
}

//===----------------------------------------------------------------------===//
// Queues
//===----------------------------------------------------------------------===//

/// A queue created and destroyed at once.
hsa_queue_t *destroyedQueue(hsa_queue_t *Q) {
  EXPECT_EQ(hsa_queue_destroy(Q), HSA_STATUS_SUCCESS);
  return Q;
}
const std::string DestroyedQueue =
    "queue 0x[0-9a-f]+ \\(number [0-9]+\\) was destroyed by hsa_queue_destroy";

TEST_F(HSAEmuMisuseTest, QueueIndicesUsedAfterDestroy) {
  hsa_queue_t *Q = destroyedQueue(queue());
  EXPECT_DEATH(hsa_queue_add_write_index_relaxed(Q, 1),
               misuseOf("hsa_queue_add_write_index_relaxed") + DestroyedQueue);
  EXPECT_DEATH(hsa_queue_cas_write_index_scacq_screl(Q, 0, 1),
               misuseOf("hsa_queue_cas_write_index_scacq_screl") +
                   DestroyedQueue);
  EXPECT_DEATH(hsa_queue_load_read_index_scacquire(Q),
               misuseOf("hsa_queue_load_read_index_scacquire") +
                   DestroyedQueue);
  EXPECT_DEATH(hsa_queue_load_write_index_relaxed(Q),
               misuseOf("hsa_queue_load_write_index_relaxed") + DestroyedQueue);
  EXPECT_DEATH(hsa_queue_store_write_index_screlease(Q, 1),
               misuseOf("hsa_queue_store_write_index_screlease") +
                   DestroyedQueue);
}

TEST_F(HSAEmuMisuseTest, QueueDestroyedTwiceOrInactivatedAfterDestroy) {
  hsa_queue_t *Q = destroyedQueue(queue());
  EXPECT_DEATH(hsa_queue_destroy(Q),
               misuseOf("hsa_queue_destroy") + DestroyedQueue);
  EXPECT_DEATH(hsa_queue_inactivate(Q),
               misuseOf("hsa_queue_inactivate") + DestroyedQueue);
  hsa_queue_t NotAQueue{};
  EXPECT_DEATH(hsa_queue_load_read_index_relaxed(&NotAQueue),
               misuseOf("hsa_queue_load_read_index_relaxed") +
                   "0x[0-9a-f]+ is not a queue \\(none was created there\\)");
}

TEST_F(HSAEmuMisuseTest, QueueDoorbellRungAfterDestroy) {
  hsa_queue_t *Q = queue();
  hsa_signal_t Doorbell = Q->doorbell_signal;
  destroyedQueue(Q);
  EXPECT_DEATH(hsa_signal_store_screlease(Doorbell, 0),
               misuseOf("hsa_signal_store_screlease") +
                   "signal 0x[0-9a-f]+ was destroyed \\(with its queue, by "
                   "hsa_queue_destroy\\)");
}

TEST_F(HSAEmuMisuseTest, QueueRingWrittenAfterDestroy) {
  hsa_queue_t *Q = queue();
  void *Ring = Q->base_address;
  destroyedQueue(Q);
  // No call to check: the ring is unmapped in place, so the write faults
  // (a sanitizer reports the fault and exits instead).
  EXPECT_EXIT(
      *static_cast<volatile uint16_t *>(Ring) = 0,
      [](int Status) {
        return ::testing::KilledBySignal(SIGSEGV)(Status) ||
               (WIFEXITED(Status) && WEXITSTATUS(Status) != 0);
      },
      "");
}

//===----------------------------------------------------------------------===//
// Pools
//===----------------------------------------------------------------------===//

TEST_F(HSAEmuMisuseTest, PoolMemoryFreedTwice) {
  void *P = deviceMemory(4096);
  ASSERT_EQ(hsa_amd_memory_pool_free(P), HSA_STATUS_SUCCESS);
  EXPECT_DEATH(hsa_amd_memory_pool_free(P),
               misuseOf("hsa_amd_memory_pool_free") +
                   "0x[0-9a-f]+ was already freed");
}

TEST_F(HSAEmuMisuseTest, PoolFreeOfMemoryNotAllocated) {
  void *P = deviceMemory(8192);
  EXPECT_DEATH(hsa_amd_memory_pool_free(static_cast<char *>(P) + 4096),
               misuseOf("hsa_amd_memory_pool_free") +
                   "0x[0-9a-f]+ is inside the 8192-byte allocation at "
                   "0x[0-9a-f]+, not its start");
  int OnStack = 0;
  EXPECT_DEATH(hsa_amd_memory_pool_free(&OnStack),
               misuseOf("hsa_amd_memory_pool_free") +
                   "0x[0-9a-f]+ was never allocated by "
                   "hsa_amd_memory_pool_allocate");
  std::vector<char> Host(4096);
  lock(Host.data(), Host.size());
  EXPECT_DEATH(hsa_amd_memory_pool_free(Host.data()),
               misuseOf("hsa_amd_memory_pool_free") +
                   "0x[0-9a-f]+ is locked host memory, not an allocation");
  EXPECT_EQ(hsa_amd_memory_unlock(Host.data()), HSA_STATUS_SUCCESS);
}

//===----------------------------------------------------------------------===//
// Copies and fills (HSA_EMU_STRICT, on by default)
//===----------------------------------------------------------------------===//

const std::string ByGpu0 = "by GPU agent 0 \\(gfx90a\\): ";

TEST_F(HSAEmuMisuseTest, CopyFromUnlockedHostMemory) {
  void *Dev = deviceMemory(4096);
  std::vector<char> Host(4096);
  EXPECT_DEATH(copy(Dev, Host.data(), Host.size()),
               misuseOf("hsa_amd_memory_async_copy") +
                   "copy of 4096 bytes from 0x[0-9a-f]+ to 0x[0-9a-f]+ " +
                   ByGpu0 +
                   "source neither a pool allocation nor locked memory");
  EXPECT_DEATH(copy(Host.data(), Dev, Host.size(), /*DstOnGpu=*/false),
               ByGpu0 + "destination neither a pool allocation nor locked "
                        "memory");
}

TEST_F(HSAEmuMisuseTest, CopyFromTheHostAddressOfLockedMemory) {
  void *Dev = deviceMemory(4096);
  std::vector<char> Host(4096);
  lock(Host.data(), Host.size());
  EXPECT_DEATH(copy(Dev, Host.data(), Host.size()),
               ByGpu0 + "source 0x[0-9a-f]+ is the host address of memory "
                        "locked at agent address 0x[0-9a-f]+; agents must use "
                        "the agent address");
  EXPECT_EQ(hsa_amd_memory_unlock(Host.data()), HSA_STATUS_SUCCESS);
}

TEST_F(HSAEmuMisuseTest, CopyOfDeviceMemoryNotGrantedToTheEngine) {
  void *Dev0 = deviceMemory(4096, 0);
  void *Dev1 = deviceMemory(4096, 1);
  EXPECT_DEATH(
      {
        hsa_signal_t Done = signal();
        hsa_amd_memory_async_copy(Dev0, Gpus[0], Dev1, Gpus[0], 4096, 0,
                                  nullptr, Done);
        waitDone(Done);
      },
      ByGpu0 + "source GPU agent 0 \\(gfx90a\\) was not granted access "
               "\\(hsa_amd_agents_allow_access\\)");
}

TEST_F(HSAEmuMisuseTest, CopyPastTheEndOfAnAllocationOrLock) {
  void *Dev = deviceMemory(4096);
  void *Host = hostMemory(4096);
  EXPECT_DEATH(copy(Dev, Host, 8192),
               ByGpu0 + "destination 8192 bytes at 0x[0-9a-f]+ run past the "
                        "end of the 4096-byte allocation");
  std::vector<char> Locked(4096);
  void *Agent = lock(Locked.data(), Locked.size());
  EXPECT_DEATH(copy(Dev, static_cast<char *>(Agent) + 1, 4096),
               ByGpu0 + "source 4096 bytes at agent address 0x[0-9a-f]+ run "
                        "past the end of the 4096-byte locked region");
  EXPECT_EQ(hsa_amd_memory_unlock(Locked.data()), HSA_STATUS_SUCCESS);
}

TEST_F(HSAEmuMisuseTest, FillOfMemoryNeitherAllocatedNorLocked) {
  std::vector<uint32_t> Host(1024);
  EXPECT_DEATH(hsa_amd_memory_fill(Host.data(), 7, Host.size()),
               misuseOf("hsa_amd_memory_fill") +
                   "1024 words at 0x[0-9a-f]+: neither a pool allocation nor "
                   "locked memory");
  void *Dev = deviceMemory(4096);
  EXPECT_DEATH(hsa_amd_memory_fill(Dev, 7, 2048),
               misuseOf("hsa_amd_memory_fill") +
                   "2048 words at 0x[0-9a-f]+: 8192 bytes at 0x[0-9a-f]+ run "
                   "past the end of the 4096-byte allocation");
}

/// HSA_EMU_STRICT=0, read by the first hsa_init of a death test's child.
class HSAEmuStrictOffTest : public HSAEmuTest {
protected:
  void SetUp() override {
    setenv("HSA_EMU_STRICT", "0", 1);
    HSAEmuTest::SetUp();
  }
  void TearDown() override {
    // Later death tests' children inherit the environment.
    unsetenv("HSA_EMU_STRICT");
    HSAEmuTest::TearDown();
  }
  /// Copy plain host memory to the device and back, then fill it: 0 when
  /// all of it worked.
  int copyAndFillPlainHostMemory() {
    void *Dev = deviceMemory(4096);
    std::vector<char> Src(4096, 'x'), Dst(4096, 0);
    bool Ok = copy(Dev, Src.data(), 4096) == 0 &&
              copy(Dst.data(), Dev, 4096, /*DstOnGpu=*/false) == 0 &&
              Dst == Src &&
              hsa_amd_memory_fill(Dst.data(), 0, 1024) == HSA_STATUS_SUCCESS &&
              Dst[0] == 0;
    return Ok ? 0 : 1;
  }
};

TEST_F(HSAEmuStrictOffTest, CopiesAndFillsAnyHostMemory) {
  EXPECT_EXIT(std::exit(copyAndFillPlainHostMemory()),
              ::testing::ExitedWithCode(0), "");
}

} // namespace

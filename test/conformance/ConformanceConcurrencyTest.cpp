// SPDX-License-Identifier: Apache-2.0
//
// Conformance: locks, transfers and unlocks from many threads at once.
#include "ConformanceFixture.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace offloadio::conformance {

TEST_P(DeviceConformance, ConcurrentLockSubmitRetrieveUnlock) {
  constexpr unsigned Threads = 16;
  constexpr unsigned Iterations = 2000;
  // Private buffers are 1536 bytes, packed, so that neighbouring threads'
  // regions share pages: a backend that pins whole pages must count them.
  constexpr size_t PrivSize = 1536;
  constexpr size_t SharedSize = 64 * KiB;
  constexpr size_t Slice = SharedSize / Threads;
  HostMemTy Arena(Threads * PrivSize), Scratch(Threads * PrivSize);
  HostMemTy Shared(SharedSize);
  void *SharedLocked = nullptr;
  ASSERT_EQ(lock(Shared.get(), SharedSize, &SharedLocked), OFFLOAD_SUCCESS);
  ASSERT_NE(SharedLocked, nullptr);
  std::vector<void *> PrivTgt(Threads), SliceTgt(Threads);
  for (unsigned T = 0; T < Threads; ++T) {
    PrivTgt[T] = alloc(PrivSize);
    SliceTgt[T] = alloc(Slice);
    ASSERT_NE(PrivTgt[T], nullptr);
    ASSERT_NE(SliceTgt[T], nullptr);
  }

  std::atomic<unsigned> Failures{0};
  std::mutex MessagesLock;
  std::vector<std::string> Messages;
  auto Fail = [&](unsigned T, unsigned I, const std::string &What) {
    Failures.fetch_add(1);
    std::lock_guard<std::mutex> Guard(MessagesLock);
    if (Messages.size() < 10)
      Messages.push_back("thread " + std::to_string(T) + ", iteration " +
                         std::to_string(I) + ": " + What);
  };

  auto Worker = [&](unsigned T) {
    char *Priv = Arena + T * PrivSize;
    char *Back = Scratch + T * PrivSize;
    char *MySlice = Shared + T * Slice;
    uint64_t Rng = 0x2545F4914F6CDD1Dull * (T + 1);
    auto Next = [&] {
      Rng ^= Rng << 13;
      Rng ^= Rng >> 7;
      Rng ^= Rng << 17;
      return Rng;
    };
    for (unsigned I = 0; I < Iterations && Failures.load() < 10; ++I) {
      uint64_t Seed = (uint64_t(T) << 32) | I;
      // A private buffer: lock, copy there and back, unlock.
      void *Locked = nullptr;
      if (P->data_lock(Dev, Priv, PrivSize, &Locked) != OFFLOAD_SUCCESS ||
          !Locked) {
        Fail(T, I, "private lock failed");
        continue;
      }
      fillPattern(Priv, PrivSize, Seed);
      if (I & 1) {
        AsyncInfoTy AI;
        std::memset(Back, 0, PrivSize);
        if (P->data_submit_async(Dev, PrivTgt[T], Priv, PrivSize, AI.get()) ||
            P->data_retrieve_async(Dev, Back, PrivTgt[T], PrivSize, AI.get()) ||
            P->synchronize(Dev, AI.get()) || AI.queue())
          Fail(T, I, "async copy failed");
        else if (auto R = hasPattern(Back, PrivSize, Seed); !R)
          Fail(T, I, std::string("async data: ") + R.message());
      } else {
        if (P->data_submit(Dev, PrivTgt[T], Priv, PrivSize) != 0) {
          Fail(T, I, "submit failed");
        } else {
          std::memset(Priv, 0, PrivSize);
          if (P->data_retrieve(Dev, Priv, PrivTgt[T], PrivSize) != 0)
            Fail(T, I, "retrieve failed");
          else if (auto R = hasPattern(Priv, PrivSize, Seed); !R)
            Fail(T, I, std::string("sync data: ") + R.message());
        }
      }
      if (P->data_unlock(Dev, Priv) != 0)
        Fail(T, I, "private unlock failed");

      // A sub-range anywhere in the shared locked region.
      size_t Off = Next() % SharedSize;
      size_t Len = 1 + Next() % (SharedSize - Off);
      void *Sub = nullptr;
      if (P->data_lock(Dev, Shared + Off, Len, &Sub) != OFFLOAD_SUCCESS) {
        Fail(T, I, "shared sub-range lock failed");
      } else {
        if (Sub != at(SharedLocked, Off))
          Fail(T, I, "shared sub-range lock is not base + offset");
        // Every eighth iteration, traffic through this thread's own slice
        // of the shared region.
        if (I % 8 == 0) {
          fillPattern(MySlice, Slice, ~Seed);
          if (P->data_submit(Dev, SliceTgt[T], MySlice, Slice) != 0)
            Fail(T, I, "slice submit failed");
          std::memset(MySlice, 0, Slice);
          if (P->data_retrieve(Dev, MySlice, SliceTgt[T], Slice) != 0)
            Fail(T, I, "slice retrieve failed");
          else if (auto R = hasPattern(MySlice, Slice, ~Seed); !R)
            Fail(T, I, std::string("slice data: ") + R.message());
        }
        if (P->data_unlock(Dev, Shared + Off) != 0)
          Fail(T, I, "shared sub-range unlock failed");
      }
    }
  };
  std::vector<std::thread> Pool;
  for (unsigned T = 0; T < Threads; ++T)
    Pool.emplace_back(Worker, T);
  for (auto &Th : Pool)
    Th.join();

  std::string Report;
  for (const std::string &M : Messages)
    Report += "\n  " + M;
  EXPECT_EQ(Failures.load(), 0u) << Report;
  // Every sub-range lock was released: the region has its one reference.
  EXPECT_EQ(unlock(Shared.get()), OFFLOAD_SUCCESS);
  EXPECT_NE(unlock(Shared.get()), OFFLOAD_SUCCESS);
  // And every private region is gone.
  for (unsigned T = 0; T < Threads; ++T)
    EXPECT_NE(unlock(Arena + T * PrivSize), OFFLOAD_SUCCESS) << "thread " << T;
}

} // namespace offloadio::conformance

// SPDX-License-Identifier: Apache-2.0
//
// AMDGPUKernargPoolTy on the HSA emulation, with eight GPUs sharing one
// pinned budget: a small first arena per device, so that many devices with
// the smallest budget still launch (take kernarg slots) and stage (take
// staging buffers); growth by doubling up to the cap; arenas beyond the
// first given back once idle when the budget refuses someone else; and the
// budget back to zero when the pools go (device deinit).
#include "AMDGPUKernargPool.h"
#include "HSAEmuFixture.h"

#include "offloadio/PinnedBudget.h"
#include "offloadio/SettingTable.h"
#include "offloadio/StagingPool.h"

#include "TestPinnedPools.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace offloadio;
using namespace offloadio::amdgpu;
using namespace offloadio::unittest;

namespace {

constexpr unsigned NumGpus = 8;
constexpr size_t Page = PinnedPoolTy::ShrinkGranule;
/// The smallest budget OFFLOADIO_PINNED_MAX allows.
constexpr uint64_t TinyBudget = settingDecl(SettingId::PinnedMax).Min;

// The emulation reads its settings at the first hsa_init of the process.
[[maybe_unused]] const bool EnvSet =
    (offloadio::test::setEmuEnv("abort", NumGpus), true);

std::string message(Error Err) { return llvm::toString(std::move(Err)); }

class AMDGPUKernargPoolTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto Loaded = HSAApiTy::load();
    ASSERT_TRUE(bool(Loaded)) << message(Loaded.takeError());
    Api = std::move(*Loaded);
    ASSERT_EQ(Api->hsa_init(), HSA_STATUS_SUCCESS);
    ASSERT_EQ(Api->hsa_iterate_agents(
                  [](hsa_agent_t A, void *Data) {
                    auto *T = static_cast<AMDGPUKernargPoolTest *>(Data);
                    hsa_device_type_t Type;
                    T->Api->hsa_agent_get_info(A, HSA_AGENT_INFO_DEVICE, &Type);
                    if (Type == HSA_DEVICE_TYPE_CPU)
                      T->Cpu = A;
                    else
                      T->Gpus.push_back(A);
                    return HSA_STATUS_SUCCESS;
                  },
                  this),
              HSA_STATUS_SUCCESS);
    ASSERT_EQ(Gpus.size(), NumGpus);
    // The CPU's first pool is its fine-grained KERNARG_INIT pool.
    Api->hsa_amd_agent_iterate_memory_pools(
        Cpu,
        [](hsa_amd_memory_pool_t P, void *Data) {
          *static_cast<hsa_amd_memory_pool_t *>(Data) = P;
          return HSA_STATUS_INFO_BREAK;
        },
        &KernargPool);
    ASSERT_NE(KernargPool.handle, 0u);
  }
  void TearDown() override {
    if (Api)
      EXPECT_EQ(Api->hsa_shut_down(), HSA_STATUS_SUCCESS);
  }

  /// The kernarg pool of GPU \p Gpu, its first arena taken.
  std::unique_ptr<AMDGPUKernargPoolTy> makePool(PinnedBudgetTy &Budget,
                                                unsigned Gpu) {
    auto Pool = std::make_unique<AMDGPUKernargPoolTy>(
        *Api, KernargPool, Gpus[Gpu], int32_t(Gpu), Budget);
    if (Error Err = Pool->init()) {
      ADD_FAILURE() << "device " << Gpu << ": " << message(std::move(Err));
      return nullptr;
    }
    return Pool;
  }

  /// A staging pool of device \p Gpu as the device makes it (2 MiB buffers,
  /// fitted to the budget), over the CPU pool's memory.
  std::unique_ptr<StagingPoolTy> makeStaging(PinnedBudgetTy &Budget,
                                             unsigned Gpu) {
    PinnedPoolTy &Pinned = Pools.make(
        [this](size_t Size) -> Expected<void *> {
          void *Ptr = nullptr;
          if (Api->hsa_amd_memory_pool_allocate(KernargPool, Size, 0, &Ptr) !=
              HSA_STATUS_SUCCESS)
            return makeError(ErrorCode::OutOfResources, "allocate {0}", Size);
          return Ptr;
        },
        [this](void *Ptr) -> Error {
          if (Api->hsa_amd_memory_pool_free(Ptr) != HSA_STATUS_SUCCESS)
            return makeError(ErrorCode::BackendError, "free {0}", Ptr);
          return Error::success();
        },
        &Budget);
    return std::make_unique<StagingPoolTy>(2 << 20, 32, Pinned,
                                           "a staging buffer of device " +
                                               std::to_string(Gpu));
  }

  std::unique_ptr<HSAApiTy> Api;
  hsa_agent_t Cpu{0};
  std::vector<hsa_agent_t> Gpus;
  hsa_amd_memory_pool_t KernargPool{0};
  TestPinnedPoolsTy Pools;
};

TEST_F(AMDGPUKernargPoolTest, ManyDevicesWithATinyBudgetStillLaunchAndStage) {
  PinnedBudgetTy Budget(TinyBudget);
  {
    std::vector<std::unique_ptr<AMDGPUKernargPoolTy>> Kernargs;
    std::vector<std::unique_ptr<StagingPoolTy>> Staging;
    for (unsigned Gpu = 0; Gpu < NumGpus; ++Gpu) {
      Kernargs.push_back(makePool(Budget, Gpu));
      ASSERT_TRUE(Kernargs.back());
      EXPECT_EQ(Kernargs.back()->arenaBytes(), Page) << "device " << Gpu;
      Staging.push_back(makeStaging(Budget, Gpu));
    }
    // The first arenas take a page each, not a share of the budget each.
    EXPECT_EQ(Budget.getStats().Used, NumGpus * Page);
    for (unsigned Round = 0; Round < 2; ++Round)
      for (unsigned Gpu = 0; Gpu < NumGpus; ++Gpu) {
        // A launch: its kernel arguments, then the staged copy of its data.
        auto Slot = Kernargs[Gpu]->acquire(256);
        ASSERT_TRUE(bool(Slot))
            << "device " << Gpu << ": " << message(Slot.takeError());
        std::memset(Slot->Ptr, 0xab, 256);
        auto Buffer = Staging[Gpu]->acquire();
        ASSERT_TRUE(bool(Buffer))
            << "device " << Gpu << ": " << message(Buffer.takeError());
        Staging[Gpu]->release(*Buffer);
        Kernargs[Gpu]->release(*Slot);
      }
    // Every device launching many kernels at once, then staging.
    std::vector<std::vector<AMDGPUKernargSlotTy>> InFlight(NumGpus);
    for (unsigned Gpu = 0; Gpu < NumGpus; ++Gpu)
      for (unsigned I = 0; I < 64; ++I) {
        auto Slot = Kernargs[Gpu]->acquire(512);
        ASSERT_TRUE(bool(Slot)) << message(Slot.takeError());
        InFlight[Gpu].push_back(*Slot);
      }
    for (unsigned Gpu = 0; Gpu < NumGpus; ++Gpu) {
      for (AMDGPUKernargSlotTy Slot : InFlight[Gpu])
        Kernargs[Gpu]->release(Slot);
      auto Buffer = Staging[Gpu]->acquire();
      ASSERT_TRUE(bool(Buffer))
          << "device " << Gpu << ": " << message(Buffer.takeError());
      Staging[Gpu]->release(*Buffer);
    }
    for (auto &S : Staging)
      EXPECT_FALSE(bool(S->clear()));
  }
  // Device deinit: every arena and buffer went back.
  EXPECT_EQ(Budget.getStats().Used, 0u);
}

TEST_F(AMDGPUKernargPoolTest, ArenasGrowByDoublingUpToTheCap) {
  PinnedBudgetTy Budget(uint64_t(1) << 30);
  auto Pool = makePool(Budget, 0);
  ASSERT_TRUE(Pool);
  EXPECT_EQ(Pool->arenas(), 1u);
  EXPECT_EQ(Pool->arenaBytes(), AMDGPUKernargPoolTy::FirstArenaSize);
  EXPECT_EQ(Pool->nextArenaSize(), 2 * Page);
  std::vector<AMDGPUKernargSlotTy> Out;
  std::vector<size_t> Sizes = {Page};
  while (Sizes.size() < 12) {
    size_t Before = Pool->arenaBytes();
    auto Slot = Pool->acquire(256);
    ASSERT_TRUE(bool(Slot)) << message(Slot.takeError());
    Out.push_back(*Slot);
    if (Pool->arenaBytes() != Before)
      Sizes.push_back(Pool->arenaBytes() - Before);
  }
  // 4 KiB, 8 KiB, ... doubling to 1 MiB, then 1 MiB each.
  for (size_t I = 1; I < Sizes.size(); ++I)
    EXPECT_EQ(Sizes[I],
              std::min<size_t>(Page << I, AMDGPUKernargPoolTy::MaxArenaSize))
        << "arena " << I;
  EXPECT_EQ(Budget.getStats().Used, Pool->arenaBytes());
  // A slot larger than the next arena gets an arena of its size.
  PinnedBudgetTy Other(uint64_t(1) << 30);
  auto Small = makePool(Other, 1);
  ASSERT_TRUE(Small);
  auto Large = Small->acquire(64 << 10);
  ASSERT_TRUE(bool(Large)) << message(Large.takeError());
  EXPECT_EQ(Small->arenaBytes(), Page + (64 << 10));
  Small->release(*Large);
  for (AMDGPUKernargSlotTy Slot : Out)
    Pool->release(Slot);
}

TEST_F(AMDGPUKernargPoolTest, ArenasShrinkBackWhenTheBudgetRefusesSomeoneElse) {
  PinnedBudgetTy Budget(TinyBudget);
  auto Pool = makePool(Budget, 0);
  ASSERT_TRUE(Pool);
  std::vector<AMDGPUKernargSlotTy> Out;
  while (Pool->arenas() < 5) {
    auto Slot = Pool->acquire(1024);
    ASSERT_TRUE(bool(Slot)) << message(Slot.takeError());
    Out.push_back(*Slot);
  }
  size_t Grown = Pool->arenaBytes();
  EXPECT_EQ(Grown, Page + 2 * Page + 4 * Page + 8 * Page + 16 * Page);
  // All back but one slot of the third arena: idle arenas stay while
  // nobody needs the memory.
  AMDGPUKernargSlotTy Kept = Out[1 * 4 + 2 * 4 + 1];
  for (AMDGPUKernargSlotTy Slot : Out)
    if (Slot.Ptr != Kept.Ptr)
      Pool->release(Slot);
  EXPECT_EQ(Pool->arenas(), 5u);
  // Someone else needs more than is left: the idle arenas beyond the first
  // go back; the first, and the one with a slot out, stay.
  uint64_t Room = Budget.room();
  auto Other = Budget.reserve(Room + 8 * Page, "another holder");
  ASSERT_TRUE(bool(Other)) << message(Other.takeError());
  EXPECT_EQ(Pool->arenas(), 2u);
  EXPECT_EQ(Pool->arenaBytes(), Page + 4 * Page);
  EXPECT_EQ(Budget.getStats().Refusals, 0u) << "granted after the reclaim";
  Pool->release(Kept);
  Other->release();
  // Launches go on: growth starts again from twice the newest arena held.
  EXPECT_EQ(Pool->nextArenaSize(), 8 * Page);
  for (unsigned I = 0; I < 40; ++I) {
    auto Slot = Pool->acquire(1024);
    ASSERT_TRUE(bool(Slot)) << message(Slot.takeError());
    Pool->release(*Slot);
  }
  auto Again = Budget.reserve(Budget.room() + Page, "another holder");
  ASSERT_TRUE(bool(Again)) << message(Again.takeError());
  EXPECT_EQ(Pool->arenas(), 1u);
  EXPECT_EQ(Pool->arenaBytes(), Page);
  Again->release();
  Pool.reset();
  EXPECT_EQ(Budget.getStats().Used, 0u);
}

} // namespace

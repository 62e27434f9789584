// SPDX-License-Identifier: Apache-2.0
//
// The placement of a sharded load (libompx_io/SafetensorsSplit.h and
// SafetensorsPlacement.h), without devices: the even split (deterministic,
// stable for equal sizes, every tensor once on a listed device, bytes
// balanced within the largest tensor, and equal to a simple model on random
// inputs), the checks of device lists and maps, and the placement's memory
// with a fake allocator: empty tensors get none, a failed allocation frees
// all before it and names the tensor, file, size and device.
#include "SafetensorsSplit.h"
#include "SafetensorsPlacement.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cerrno>
#include <map>
#include <random>
#include <set>

using namespace ompxio::safetensors;

namespace {

/// The bytes per device of \p DeviceOf.
std::map<int, uint64_t> bytesPerDevice(const std::vector<uint64_t> &Bytes,
                                       const std::vector<int> &DeviceOf) {
  std::map<int, uint64_t> Sum;
  for (size_t I = 0; I < Bytes.size(); ++I)
    Sum[DeviceOf[I]] += Bytes[I];
  return Sum;
}

/// The split as its contract states it, written the slow way: the
/// unplaced tensor with the most bytes (the first of equals) goes to the
/// listed device with the fewest bytes (the first of equals).
std::vector<int> modelSplit(const std::vector<uint64_t> &Bytes,
                            const std::vector<int> &Devices) {
  std::vector<int> DeviceOf(Bytes.size(), -1);
  std::vector<uint64_t> Load(Devices.size(), 0);
  for (size_t Step = 0; Step < Bytes.size(); ++Step) {
    size_t Next = Bytes.size();
    for (size_t T = 0; T < Bytes.size(); ++T)
      if (DeviceOf[T] == -1 && (Next == Bytes.size() || Bytes[T] > Bytes[Next]))
        Next = T;
    size_t Least = 0;
    for (size_t D = 0; D < Devices.size(); ++D)
      if (Load[D] < Load[Least])
        Least = D;
    Load[Least] += Bytes[Next];
    DeviceOf[Next] = Devices[Least];
  }
  return DeviceOf;
}

TEST(SafetensorsSplitTest, LargestFirstToTheLeastLoadedDevice) {
  std::vector<uint64_t> Bytes = {10, 40, 30, 20};
  int Devices[] = {3, 1};
  // 40 -> 3 (a tie: the first listed), 30 -> 1, 20 -> 1, 10 -> 3.
  EXPECT_EQ(splitEvenly(Bytes, Devices, 2), (std::vector<int>{3, 3, 1, 1}));
  EXPECT_EQ(bytesPerDevice(Bytes, splitEvenly(Bytes, Devices, 2)),
            (std::map<int, uint64_t>{{1, 50}, {3, 50}}));
}

TEST(SafetensorsSplitTest, EqualSizesKeepTheirOrder) {
  std::vector<uint64_t> Bytes(7, 5);
  int Devices[] = {0, 1, 2};
  EXPECT_EQ(splitEvenly(Bytes, Devices, 3),
            (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
  // The same request gives the same split every time.
  EXPECT_EQ(splitEvenly(Bytes, Devices, 3), splitEvenly(Bytes, Devices, 3));
}

TEST(SafetensorsSplitTest, EmptyTensorsGetADeviceToo) {
  std::vector<uint64_t> Bytes = {0, 8, 0, 0};
  int Devices[] = {5, 6};
  // 8 -> 5; the empty ones to the device with fewer bytes: 6.
  EXPECT_EQ(splitEvenly(Bytes, Devices, 2), (std::vector<int>{6, 5, 6, 6}));
}

TEST(SafetensorsSplitTest, OneDeviceAndNoTensors) {
  int Device = 2;
  EXPECT_EQ(splitEvenly({7, 1, 9}, &Device, 1), (std::vector<int>{2, 2, 2}));
  int Devices[] = {0, 1};
  EXPECT_TRUE(splitEvenly({}, Devices, 2).empty());
}

TEST(SafetensorsSplitTest, RandomSplitsMatchTheModelAndBalance) {
  std::mt19937_64 Random(31);
  for (int Round = 0; Round < 2000; ++Round) {
    size_t NumTensors = Random() % 60;
    std::vector<uint64_t> Bytes(NumTensors);
    // Few distinct sizes, zeros included, so that ties are common; and
    // now and then sizes near 2^63.
    uint64_t Range = Round % 3 == 0 ? 4 : Round % 3 == 1 ? 1000 : 1ull << 58;
    for (uint64_t &B : Bytes)
      B = Random() % Range;
    std::vector<int> Devices;
    size_t NumDevices = 1 + Random() % 8;
    while (Devices.size() < NumDevices) {
      int D = int(Random() % 16);
      if (std::find(Devices.begin(), Devices.end(), D) == Devices.end())
        Devices.push_back(D);
    }
    std::vector<int> DeviceOf =
        splitEvenly(Bytes, Devices.data(), Devices.size());
    ASSERT_EQ(DeviceOf, modelSplit(Bytes, Devices)) << "round " << Round;
    ASSERT_EQ(DeviceOf.size(), Bytes.size());
    for (int D : DeviceOf)
      ASSERT_NE(std::find(Devices.begin(), Devices.end(), D), Devices.end());
    // Every listed device counts, those with nothing too.
    std::map<int, uint64_t> Sum = bytesPerDevice(Bytes, DeviceOf);
    for (int D : Devices)
      Sum[D] += 0;
    uint64_t Largest =
        Bytes.empty() ? 0 : *std::max_element(Bytes.begin(), Bytes.end());
    uint64_t Most = 0, Fewest = UINT64_MAX;
    for (auto [D, S] : Sum) {
      Most = std::max(Most, S);
      Fewest = std::min(Fewest, S);
    }
    ASSERT_LE(Most - Fewest, Largest) << "round " << Round;
  }
}

TEST(SafetensorsSplitTest, DeviceListChecks) {
  DeviceNumbersTy Numbers{4, 4};
  int Good[] = {0, 1, 2, 3, 4};
  EXPECT_EQ(checkDeviceList(Good, 5, Numbers), std::nullopt);
  EXPECT_EQ(checkDeviceList(nullptr, 0, Numbers),
            "the list of devices is empty");
  EXPECT_EQ(checkDeviceList(Good, 0, Numbers), "the list of devices is empty");
  int Missing[] = {0, 5};
  EXPECT_EQ(checkDeviceList(Missing, 2, Numbers),
            "devices[1]: device 5 does not exist (4 devices; the initial "
            "device is 4)");
  int Negative[] = {-1};
  EXPECT_EQ(checkDeviceList(Negative, 1, Numbers),
            "devices[0]: device -1 does not exist (4 devices; the initial "
            "device is 4)");
  int Twice[] = {1, 2, 1};
  EXPECT_EQ(checkDeviceList(Twice, 3, Numbers),
            "devices[2]: device 1 is in the list twice");
}

TEST(SafetensorsSplitTest, MapChecks) {
  DeviceNumbersTy Numbers{2, 2};
  int Good[] = {0, 1, 1, 2, 0};
  EXPECT_EQ(firstMissingDevice(Good, 5, Numbers), std::nullopt);
  EXPECT_EQ(firstMissingDevice(nullptr, 0, Numbers), std::nullopt);
  int Bad[] = {0, 1, 3, -2};
  EXPECT_EQ(firstMissingDevice(Bad, 4, Numbers), 2u);
  int Negative[] = {-1};
  EXPECT_EQ(firstMissingDevice(Negative, 1, Numbers), 0u);
  // Without offload devices only the initial device exists.
  DeviceNumbersTy HostOnly{0, 0};
  int Host[] = {0};
  EXPECT_EQ(firstMissingDevice(Host, 1, HostOnly), std::nullopt);
  int One[] = {1};
  EXPECT_EQ(firstMissingDevice(One, 1, HostOnly), 0u);
}

/// A fake device allocator: counts live allocations, fails the allocation
/// numbered FailAt (0 first), records the size and device asked for.
struct FakeMemory {
  static inline std::map<void *, std::pair<size_t, int>> Live;
  static inline int Calls = 0;
  static inline int FailAt = -1;
  static inline int Frees = 0;

  static void reset(int Fail) {
    Live.clear();
    Calls = 0;
    FailAt = Fail;
    Frees = 0;
  }
  static void *alloc(size_t Bytes, int Device) {
    if (Calls++ == FailAt)
      return nullptr;
    void *P = new char[Bytes];
    Live[P] = {Bytes, Device};
    return P;
  }
  static void free(void *P, int Device) {
    auto It = Live.find(P);
    ASSERT_NE(It, Live.end());
    EXPECT_EQ(It->second.second, Device);
    delete[] static_cast<char *>(P);
    Live.erase(It);
    ++Frees;
  }
  static DeviceMemoryTy memory() {
    DeviceMemoryTy M;
    M.Alloc = alloc;
    M.Free = free;
    return M;
  }
};

void addTensors(PlacementTy &P) {
  const char *Names[] = {"w", "empty", "b", "head"};
  uint64_t Bytes[] = {64, 0, 16, 32};
  int Devices[] = {0, 1, 1, 2};
  for (size_t I = 0; I < 4; ++I) {
    PlacedTensorTy T;
    T.Name = Names[I];
    T.File = "shard-" + std::to_string(I % 2) + ".safetensors";
    T.Index = 10 + I;
    T.Device = Devices[I];
    T.Bytes = Bytes[I];
    P.add(std::move(T));
  }
}

TEST(SafetensorsPlacementTest, AllocatesEveryTensorWithBytesAndFreesAll) {
  FakeMemory::reset(-1);
  {
    PlacementTy P(FakeMemory::memory());
    addTensors(P);
    ASSERT_FALSE(P.allocate());
    EXPECT_EQ(FakeMemory::Live.size(), 3u);
    const std::vector<PlacedTensorTy> &T = P.tensors();
    EXPECT_NE(T[0].Ptr, nullptr);
    EXPECT_EQ(T[1].Ptr, nullptr) << "an empty tensor gets no memory";
    EXPECT_EQ(T[1].Device, 1);
    EXPECT_EQ(FakeMemory::Live[T[0].Ptr], (std::pair<size_t, int>{64, 0}));
    EXPECT_EQ(FakeMemory::Live[T[3].Ptr], (std::pair<size_t, int>{32, 2}));
    EXPECT_EQ(P.find("head"), 3u);
    EXPECT_EQ(P.find("empty"), 1u);
    EXPECT_EQ(P.find("w"), 0u);
    EXPECT_EQ(P.find("nope"), std::nullopt);
    EXPECT_EQ(P.find(""), std::nullopt);
  }
  EXPECT_TRUE(FakeMemory::Live.empty());
  EXPECT_EQ(FakeMemory::Frees, 3);
}

TEST(SafetensorsPlacementTest, AFailedAllocationFreesAllBeforeIt) {
  // The third allocation (the tensor "head") fails.
  FakeMemory::reset(2);
  PlacementTy P(FakeMemory::memory());
  addTensors(P);
  ErrorTy Err = P.allocate();
  ASSERT_TRUE(Err);
  EXPECT_EQ(Err.Errno, ENOMEM);
  EXPECT_EQ(Err.Message,
            "tensor 'head' of shard-1.safetensors: omp_target_alloc(32 "
            "bytes, device 2) returned NULL; the 2 allocations made before "
            "it were freed");
  EXPECT_TRUE(FakeMemory::Live.empty());
  for (const PlacedTensorTy &T : P.tensors())
    EXPECT_EQ(T.Ptr, nullptr);
  // Nothing is freed twice when the placement goes.
}

TEST(SafetensorsPlacementTest, TheFirstAllocationFailing) {
  FakeMemory::reset(0);
  {
    PlacementTy P(FakeMemory::memory());
    addTensors(P);
    ErrorTy Err = P.allocate();
    ASSERT_TRUE(Err);
    EXPECT_NE(Err.Message.find("tensor 'w' of shard-0.safetensors: "
                               "omp_target_alloc(64 bytes, device 0)"),
              std::string::npos);
    EXPECT_NE(Err.Message.find("the 0 allocations"), std::string::npos);
  }
  EXPECT_EQ(FakeMemory::Frees, 0);
}

} // namespace

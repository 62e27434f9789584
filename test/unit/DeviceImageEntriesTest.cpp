// SPDX-License-Identifier: Apache-2.0
// DeviceImageTy's entry table and its lookup by name (libomptarget 18's
// get_function and get_global), against a linear search from the table's
// start on random tables with repeated and missing names.
#include "offloadio/DeviceImage.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace offloadio;

namespace {

const __tgt_device_image NoImage = {nullptr, nullptr, nullptr, nullptr};

__tgt_offload_entry entry(const char *Name, uintptr_t Addr) {
  __tgt_offload_entry E{};
  E.addr = reinterpret_cast<void *>(Addr);
  E.name = const_cast<char *>(Name);
  return E;
}

TEST(DeviceImageEntriesTest, TableCoversEveryEntryInOrder) {
  DeviceImageTy Image(0, NoImage);
  Image.Entries = {entry("a", 1), entry("b", 2), entry("c", 3)};
  Image.sealEntries();
  ASSERT_EQ(Image.Table.EntriesBegin, Image.Entries.data());
  ASSERT_EQ(Image.Table.EntriesEnd - Image.Table.EntriesBegin, 3);
  EXPECT_EQ(Image.findEntry("b"), &Image.Entries[1]);
}

TEST(DeviceImageEntriesTest, MissingAndEmptyNamesFindNothing) {
  DeviceImageTy Image(0, NoImage);
  Image.Entries = {entry("kernel", 1), entry(nullptr, 2)};
  Image.sealEntries();
  EXPECT_EQ(Image.findEntry("kern"), nullptr);
  EXPECT_EQ(Image.findEntry("kernel2"), nullptr);
  EXPECT_EQ(Image.findEntry(""), nullptr);
}

TEST(DeviceImageEntriesTest, AnImageWithoutEntriesFindsNothing) {
  DeviceImageTy Image(0, NoImage);
  Image.sealEntries();
  EXPECT_EQ(Image.Table.EntriesBegin, Image.Table.EntriesEnd);
  EXPECT_EQ(Image.findEntry("anything"), nullptr);
}

// The model: the first entry of that name from the table's start.
const __tgt_offload_entry *linearFind(const DeviceImageTy &Image,
                                      const std::string &Name) {
  for (const __tgt_offload_entry *E = Image.Table.EntriesBegin;
       E != Image.Table.EntriesEnd; ++E)
    if (E->name && Name == E->name)
      return E;
  return nullptr;
}

TEST(DeviceImageEntriesTest, AgreesWithALinearSearchOnRandomTables) {
  std::mt19937 Rng(20261207);
  std::vector<std::string> Pool;
  for (int I = 0; I < 40; ++I)
    Pool.push_back("__omp_offloading_" + std::to_string(I));
  for (int Round = 0; Round < 200; ++Round) {
    DeviceImageTy Image(Round, NoImage);
    std::uniform_int_distribution<size_t> Count(0, 60), Pick(0, 29);
    size_t N = Count(Rng);
    for (size_t I = 0; I < N; ++I)
      Image.Entries.push_back(entry(Pool[Pick(Rng)].c_str(), I + 1));
    Image.sealEntries();
    // Names 30..39 never occur.
    for (const std::string &Name : Pool)
      ASSERT_EQ(Image.findEntry(Name), linearFind(Image, Name))
          << "round " << Round << ", name " << Name;
  }
}

} // namespace

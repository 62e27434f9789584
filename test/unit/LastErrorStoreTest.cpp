// SPDX-License-Identifier: Apache-2.0
//
// The per-thread last-error store of libompx_io and the plugins
// (offloadio/LastErrorStore.h): recording, the lifetime of the text handed
// out, taking, threads and owners kept apart, and diversions.
#include "offloadio/LastErrorStore.h"

#include "gtest/gtest.h"

#include <string>
#include <thread>

using namespace offloadio;

namespace {
// Each test uses owners of its own: a store is per thread and per owner,
// and GoogleTest runs the tests of a binary on one thread.
struct RecordOwner;
struct StableOwner;
struct TakeOwner;
struct ThreadOwner;
struct FirstOwner;
struct SecondOwner;
struct DivertOwner;
struct NestOwner;
} // namespace

TEST(LastErrorStoreTest, RecordReplacesTheMessage) {
  using StoreTy = LastErrorStoreTy<RecordOwner>;
  EXPECT_EQ(StoreTy::text(), "");
  StoreTy::record("first");
  EXPECT_EQ(StoreTy::text(), "first");
  StoreTy::record("second");
  EXPECT_EQ(StoreTy::text(), "second");
}

TEST(LastErrorStoreTest, TextStaysValidUntilTheNextRecord) {
  using StoreTy = LastErrorStoreTy<StableOwner>;
  StoreTy::record("a failure long enough to live outside the small buffer");
  const char *Handed = StoreTy::text().c_str();
  // Reading again, from any code, neither moves nor changes it.
  EXPECT_EQ(StoreTy::text().c_str(), Handed);
  (void)StoreTy::text();
  EXPECT_STREQ(Handed,
               "a failure long enough to live outside the small buffer");
}

TEST(LastErrorStoreTest, TakeLeavesNone) {
  using StoreTy = LastErrorStoreTy<TakeOwner>;
  StoreTy::record("taken");
  EXPECT_EQ(StoreTy::take(), "taken");
  EXPECT_EQ(StoreTy::text(), "");
  EXPECT_EQ(StoreTy::take(), "");
}

TEST(LastErrorStoreTest, EachThreadHasItsOwn) {
  using StoreTy = LastErrorStoreTy<ThreadOwner>;
  StoreTy::record("main thread");
  std::string Seen, Recorded;
  std::thread Other([&] {
    Seen = StoreTy::text();
    StoreTy::record("other thread");
    Recorded = StoreTy::text();
  });
  Other.join();
  EXPECT_EQ(Seen, "");
  EXPECT_EQ(Recorded, "other thread");
  EXPECT_EQ(StoreTy::text(), "main thread");
}

TEST(LastErrorStoreTest, EachOwnerHasItsOwn) {
  LastErrorStoreTy<FirstOwner>::record("first owner");
  EXPECT_EQ(LastErrorStoreTy<SecondOwner>::text(), "");
  LastErrorStoreTy<SecondOwner>::record("second owner");
  EXPECT_EQ(LastErrorStoreTy<FirstOwner>::text(), "first owner");
}

TEST(LastErrorStoreTest, ADiversionKeepsTheThreadsMessage) {
  using StoreTy = LastErrorStoreTy<DivertOwner>;
  StoreTy::record("the program's failure");
  const char *Handed = StoreTy::text().c_str();
  {
    StoreTy::DiversionTy Diverted;
    EXPECT_EQ(Diverted.message(), "");
    EXPECT_EQ(StoreTy::text(), "");
    StoreTy::record("a failure on the program's behalf");
    EXPECT_EQ(Diverted.message(), "a failure on the program's behalf");
    EXPECT_EQ(StoreTy::take(), "a failure on the program's behalf");
    EXPECT_EQ(Diverted.message(), "");
  }
  EXPECT_EQ(StoreTy::text().c_str(), Handed);
  EXPECT_STREQ(Handed, "the program's failure");
}

TEST(LastErrorStoreTest, DiversionsNest) {
  using StoreTy = LastErrorStoreTy<NestOwner>;
  StoreTy::DiversionTy Outer;
  StoreTy::record("outer");
  {
    StoreTy::DiversionTy Inner;
    StoreTy::record("inner");
    EXPECT_EQ(Inner.message(), "inner");
    EXPECT_EQ(Outer.message(), "outer");
  }
  StoreTy::record("outer again");
  EXPECT_EQ(Outer.message(), "outer again");
  EXPECT_EQ(StoreTy::take(), "outer again");
}

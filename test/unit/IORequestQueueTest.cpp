// SPDX-License-Identifier: Apache-2.0
//
// IORequestQueueTy: requests queued together keep their order, appends go
// to their own lane in order, and a whole block of requests costs the
// workers one wakeup.
#include "offloadio/io/IORequest.h"
#include "offloadio/io/IORequestQueue.h"

#include "gtest/gtest.h"

#include <memory>
#include <vector>

using namespace offloadio;

namespace {

/// \p N one-chunk requests; those whose index \p IsAppend names are
/// O_APPEND writes.
std::vector<std::unique_ptr<IORequestTy>>
makeRequests(size_t N, bool (*IsAppend)(size_t) = nullptr) {
  static char Buffer[64];
  std::vector<std::unique_ptr<IORequestTy>> Rs;
  for (size_t I = 0; I < N; ++I) {
    bool Append = IsAppend && IsAppend(I);
    Rs.push_back(std::make_unique<IORequestTy>(
        Append ? IORequestTy::Write : IORequestTy::Read, -1, Buffer, 1,
        off_t(I), IOPathTy::Staged, 4096, Append));
  }
  return Rs;
}

std::vector<IORequestTy *> pointers(
    const std::vector<std::unique_ptr<IORequestTy>> &Rs) {
  std::vector<IORequestTy *> Out;
  for (const auto &R : Rs)
    Out.push_back(R.get());
  return Out;
}

TEST(IORequestQueueTest, ABlockIsServedInOrderAfterOneWakeup) {
  IORequestQueueTy Queue;
  unsigned Wakeups = 0;
  Queue.setWakeup([&] { ++Wakeups; });
  auto Rs = makeRequests(200);
  std::vector<IORequestTy *> Ptrs = pointers(Rs);
  Queue.pushAll(Ptrs.data(), 150);
  EXPECT_EQ(Wakeups, 1u);
  Queue.push(*Ptrs[150]);
  Queue.pushAll(Ptrs.data() + 151, 49);
  EXPECT_EQ(Wakeups, 3u);
  Queue.pushAll(Ptrs.data(), 0);
  EXPECT_EQ(Wakeups, 3u) << "an empty block wakes no one";

  for (size_t I = 0; I < Rs.size(); ++I) {
    size_t Chunk = SIZE_MAX;
    IORequestTy *R = Queue.tryNextRequest(Chunk);
    ASSERT_EQ(R, Ptrs[I]) << "request " << I;
    EXPECT_EQ(Chunk, 0u);
  }
  size_t Chunk;
  EXPECT_EQ(Queue.tryNextRequest(Chunk), nullptr);
  EXPECT_TRUE(Queue.idle());
}

TEST(IORequestQueueTest, AppendsOfABlockTakeTheirLaneOneAtATime) {
  IORequestQueueTy Queue;
  auto Rs = makeRequests(10, [](size_t I) { return I % 3 == 0; });
  std::vector<IORequestTy *> Ptrs = pointers(Rs);
  Queue.pushAll(Ptrs.data(), Ptrs.size());

  // The lane's front first, then the positional requests; the next append
  // only after the one before ended.
  size_t Chunk;
  std::vector<IORequestTy *> Served;
  while (IORequestTy *R = Queue.tryNextRequest(Chunk))
    Served.push_back(R);
  std::vector<IORequestTy *> Expected = {Ptrs[0], Ptrs[1], Ptrs[2], Ptrs[4],
                                         Ptrs[5], Ptrs[7], Ptrs[8]};
  EXPECT_EQ(Served, Expected);
  for (size_t Next : {3, 6, 9}) {
    EXPECT_FALSE(Queue.idle());
    Queue.endAppend();
    ASSERT_EQ(Queue.tryNextRequest(Chunk), Ptrs[Next]);
    EXPECT_EQ(Queue.tryNextRequest(Chunk), nullptr);
  }
  Queue.endAppend();
  EXPECT_TRUE(Queue.idle());
}

} // namespace

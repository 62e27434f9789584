// SPDX-License-Identifier: Apache-2.0
//
// PeerAccessTableTy: the backend is asked once per peer, its answer is kept,
// an error is returned once and kept as "indirect", and concurrent first
// copies to one peer ask once.
#include "offloadio/PeerAccess.h"

#include "gtest/gtest.h"

#include <atomic>
#include <thread>
#include <vector>

using namespace offloadio;

namespace {

bool value(Expected<bool> Answer) {
  EXPECT_TRUE(bool(Answer)) << (Answer ? "" : toString(Answer.takeError()));
  return Answer && *Answer;
}

TEST(PeerAccessTest, AsksOncePerPeerAndKeepsEachAnswer) {
  PeerAccessTableTy Table;
  int Asked[4] = {};
  auto Ask = [&](int32_t Peer) {
    return Table.hasPeerAccess(Peer, [&, Peer]() -> Expected<bool> {
      ++Asked[Peer];
      return Peer % 2 == 1;
    });
  };
  for (int Round = 0; Round < 3; ++Round)
    for (int32_t Peer : {3, 0, 1, 2}) {
      EXPECT_EQ(value(Ask(Peer)), Peer % 2 == 1) << "peer " << Peer;
      EXPECT_EQ(Asked[Peer], 1) << "peer " << Peer;
    }
}

TEST(PeerAccessTest, AnErrorIsReturnedOnceAndKeptAsIndirect) {
  PeerAccessTableTy Table;
  int Asked = 0;
  auto Fails = [&]() -> Expected<bool> {
    ++Asked;
    return makeError(ErrorCode::BackendError, "enable failed");
  };
  auto First = Table.hasPeerAccess(1, Fails);
  ASSERT_FALSE(bool(First));
  EXPECT_NE(toString(First.takeError()).find("enable failed"),
            std::string::npos);
  // Kept: the backend is not asked again, copies take the indirect route.
  for (int Round = 0; Round < 3; ++Round)
    EXPECT_EQ(value(Table.hasPeerAccess(1, Fails)), false);
  EXPECT_EQ(Asked, 1);
}

TEST(PeerAccessTest, ANegativePeerIsRefused) {
  PeerAccessTableTy Table;
  bool Asked = false;
  auto Answer = Table.hasPeerAccess(-1, [&]() -> Expected<bool> {
    Asked = true;
    return true;
  });
  ASSERT_FALSE(bool(Answer));
  llvm::consumeError(Answer.takeError());
  EXPECT_FALSE(Asked);
}

TEST(PeerAccessTest, ConcurrentFirstCopiesAskOnce) {
  for (int Trial = 0; Trial < 20; ++Trial) {
    PeerAccessTableTy Table;
    std::atomic<int> Asked{0};
    std::atomic<int> WithPeerAccess{0};
    std::vector<std::thread> Threads;
    for (int T = 0; T < 8; ++T)
      Threads.emplace_back([&, T] {
        int32_t Peer = 1 + T % 2;
        if (value(Table.hasPeerAccess(Peer, [&]() -> Expected<bool> {
              ++Asked;
              std::this_thread::yield();
              return true;
            })))
          ++WithPeerAccess;
      });
    for (auto &T : Threads)
      T.join();
    EXPECT_EQ(Asked.load(), 2);
    EXPECT_EQ(WithPeerAccess.load(), 8);
  }
}

} // namespace

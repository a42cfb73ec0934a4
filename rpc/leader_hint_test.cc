#include "rpc/leader_hint.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(TrackerAddressesTest, OneAddressStaysPut) {
  TrackerAddresses trackers("127.0.0.1:7070", true);
  EXPECT_EQ(trackers.current(), "127.0.0.1:7070");
  EXPECT_FALSE(trackers.Advance(""));
  EXPECT_EQ(trackers.current(), "127.0.0.1:7070");
}

TEST(TrackerAddressesTest, TriesTheListedReplicasInTurn) {
  TrackerAddresses trackers(" a:1, b:2 ,,c:3", false);
  EXPECT_EQ(trackers.size(), 3u);
  EXPECT_EQ(trackers.current(), "a:1");
  EXPECT_TRUE(trackers.Advance(""));
  EXPECT_EQ(trackers.current(), "b:2");
  EXPECT_TRUE(trackers.Advance(""));
  EXPECT_EQ(trackers.current(), "c:3");
  EXPECT_TRUE(trackers.Advance(""));
  EXPECT_EQ(trackers.current(), "a:1");
}

TEST(TrackerAddressesTest, FollowsTheLeaderAStandbyNames) {
  TrackerAddresses trackers("a:1,b:2", false);
  EXPECT_TRUE(trackers.Advance("leader.example:7070"));
  EXPECT_EQ(trackers.current(), "leader.example:7070");
  // That leader gone, the list again, from where it was.
  EXPECT_TRUE(trackers.Advance(""));
  EXPECT_EQ(trackers.current(), "b:2");
}

TEST(TrackerAddressesTest, PlaintextFollowsOnlyLoopbackOrListedLeaders) {
  TrackerAddresses trackers("127.0.0.1:1,127.0.0.1:2", true);
  trackers.Advance("evil.example:7070");  // would carry the token off the host
  EXPECT_EQ(trackers.current(), "127.0.0.1:2");
  EXPECT_TRUE(trackers.Advance("127.0.0.1:9"));
  EXPECT_EQ(trackers.current(), "127.0.0.1:9");
}

}  // namespace
}  // namespace tunefleet

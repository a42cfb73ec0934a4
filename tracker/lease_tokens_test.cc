#include "tracker/lease_tokens.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tracker/store/store.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

LeaseTokens Tokens(const std::string& key) {
  absl::StatusOr<LeaseTokens> tokens = LeaseTokens::FromHexKey(key);
  EXPECT_TRUE(tokens.ok()) << tokens.status();
  return *std::move(tokens);
}

TEST(LeaseTokensTest, AnotherTrackerOnTheSameKeyVerifiesWhatOneMinted) {
  const std::string key = NewLeaseKey();
  LeaseTokens old_leader = Tokens(key);
  const std::string id = old_leader.Mint({"job-7.a", 41, Stage::kMeasure}, "agent-1");
  absl::StatusOr<LeaseClaim> claim = Tokens(key).Verify(id, "agent-1");
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_EQ(claim->job_id, "job-7.a");  // a job id may hold dots
  EXPECT_EQ(claim->trial_id, 41);
  EXPECT_EQ(claim->stage, Stage::kMeasure);
  const std::string build = old_leader.Mint({"j", 0, Stage::kBuild}, "builder-1");
  EXPECT_NE(build, old_leader.Mint({"j", 0, Stage::kBuild}, "builder-1"));  // never reused
  ASSERT_TRUE(Tokens(key).Verify(build, "builder-1").ok());
  EXPECT_EQ(Tokens(key).Verify(build, "builder-1")->stage, Stage::kBuild);
}

TEST(LeaseTokensTest, RefusesAnotherWorkersAnotherStoresAnAlteredOrAMalformedId) {
  const std::string key = NewLeaseKey();
  LeaseTokens tokens = Tokens(key);
  const std::string id = tokens.Mint({"job-1", 3, Stage::kMeasure}, "agent-1");
  EXPECT_THAT(std::string(tokens.Verify(id, "agent-2").status().message()),
              HasSubstr("signature does not match"));
  EXPECT_FALSE(Tokens(NewLeaseKey()).Verify(id, "agent-1").ok());
  // Another trial, stage or job with the same signature.
  std::string other_trial = id;
  other_trial.replace(other_trial.find(".3."), 3, ".4.");
  EXPECT_FALSE(tokens.Verify(other_trial, "agent-1").ok());
  std::string other_stage = id;
  other_stage.replace(other_stage.find(".m."), 3, ".b.");
  EXPECT_FALSE(tokens.Verify(other_stage, "agent-1").ok());
  EXPECT_FALSE(tokens.Verify(id + "x", "agent-1").ok());
  for (const std::string& bad : std::vector<std::string>{
           "", "L1", "L1.m.3.00.job", "L1.x.3.0123456789abcdef0123456789abcdef.j",
           "L1.m.-3.0123456789abcdef0123456789abcdef.j", "L1.m.3.0123456789abcdef0123456789abcdef.",
           std::string(kMaxLeaseIdBytes + 1, 'L')}) {
    absl::StatusOr<LeaseClaim> claim = tokens.Verify(bad, "agent-1");
    EXPECT_EQ(claim.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(LeaseTokens::FromHexKey("abc").ok());
  EXPECT_FALSE(LeaseTokens::FromHexKey(std::string(64, 'z')).ok());
}

}  // namespace
}  // namespace tunefleet

#include "tracker/user_quotas.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tracker/scheduler_parts_for_test.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

// A job of `owner` with `quota` (as the tracker sets them at submit).
Job& OwnedJob(SchedulerParts& parts, const std::string& owner, const proto::UserQuota& quota,
              int64_t n_trial = 8) {
  Job& job = parts.SubmitJob(n_trial);
  job.stored.spec.set_owner(owner);
  *job.stored.spec.mutable_owner_quota() = quota;
  return job;
}

TEST(UserQuotasTest, OneMoreJobThanTheQuotaIsRefusedNamingIt) {
  SchedulerParts parts;
  proto::UserQuota quota;
  quota.set_max_jobs_in_flight(2);
  OwnedJob(parts, "tf_alice", quota);
  OwnedJob(parts, "tf_alice", quota);
  OwnedJob(parts, "tf_bob", quota);
  proto::JobSpec next;
  next.set_owner("tf_alice");
  *next.mutable_owner_quota() = quota;
  const absl::Status refused = UserQuotas::CheckSubmit(parts.jobs, next);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("user tf_alice has 2 jobs"));
  EXPECT_THAT(refused.message(), HasSubstr("jobs=2"));
  next.set_owner("tf_bob");  // bob has one
  EXPECT_TRUE(UserQuotas::CheckSubmit(parts.jobs, next).ok());
  next.clear_owner_quota();  // no quota: no limit
  next.set_owner("tf_alice");
  EXPECT_TRUE(UserQuotas::CheckSubmit(parts.jobs, next).ok());
}

TEST(UserQuotasTest, BuildsWaitOnceTheHourIsUsedUpAndResumeAsItSlides) {
  SchedulerParts parts;
  Worker& tuner = parts.AddWorker(proto::TUNER, "t");
  Worker& builder = parts.AddWorker(proto::BUILDER, "b", "", 8);
  proto::UserQuota quota;
  quota.set_max_trials_per_hour(3);
  Job& limited = OwnedJob(parts, "tf_alice", quota);
  Job& free = OwnedJob(parts, "tf_bob", proto::UserQuota());
  parts.dispatcher.DispatchAll(0);
  parts.ProposeConfigs(limited, tuner, {1, 2, 3, 4, 5});
  parts.ProposeConfigs(free, tuner, {1, 2, 3});
  parts.dispatcher.DispatchAll(parts.clock.NowSeconds());
  EXPECT_EQ(limited.building, 3);
  EXPECT_EQ(limited.to_build.size(), 2u);
  EXPECT_EQ(free.building, 3) << "another user's jobs are not held";
  EXPECT_EQ(SchedulerParts::outbox_of(builder).Take(proto::TrackerMessage::kBuild).size(), 6u);
  const std::vector<proto::UserSummary> users =
      parts.dispatcher.UserSummaries(parts.clock.NowSeconds());
  ASSERT_EQ(users.size(), 2u);
  EXPECT_EQ(users[0].user(), "tf_alice");
  EXPECT_EQ(users[0].trials_last_hour(), 3);
  EXPECT_EQ(users[0].held(), "trials_per_hour");
  EXPECT_EQ(users[0].quota().max_trials_per_hour(), 3);
  EXPECT_EQ(users[1].held(), "");
  // An hour later the first three have left the window.
  parts.clock.AdvanceSeconds(3601);
  parts.dispatcher.DispatchAll(parts.clock.NowSeconds());
  EXPECT_EQ(limited.to_build.size(), 0u);
}

TEST(UserQuotasTest, AnOwnerMeasuresOnItsShareOfTheKeysAgents) {
  SchedulerParts parts;
  for (const char* name : {"a1", "a2", "a3", "a4"}) parts.AddWorker(proto::AGENT, name, "cpu");
  proto::UserQuota quota;
  quota.set_max_agent_share(0.5);  // 2 of 4 agents
  Job& mine = OwnedJob(parts, "tf_alice", quota);
  Job& other = OwnedJob(parts, "tf_bob", proto::UserQuota());
  mine.measuring = 1;
  other.measuring = 3;  // another user's trials do not count against it
  EXPECT_EQ(UserQuotas::MeasureHold(parts.jobs, mine, 4), "");
  mine.measuring = 2;
  EXPECT_EQ(UserQuotas::MeasureHold(parts.jobs, mine, 4), "agent_share on cpu");
  // A second job of the same owner shares the same allowance.
  Job& second = OwnedJob(parts, "tf_alice", quota);
  mine.measuring = 1;
  second.measuring = 1;
  EXPECT_EQ(UserQuotas::MeasureHold(parts.jobs, second, 4), "agent_share on cpu");
  // At least one agent whatever the share.
  mine.measuring = 0;
  second.measuring = 0;
  EXPECT_EQ(UserQuotas::MeasureHold(parts.jobs, mine, 1), "");
  EXPECT_EQ(UserQuotas::MeasureHold(parts.jobs, other, 4), "") << "no quota, no hold";
}

}  // namespace
}  // namespace tunefleet

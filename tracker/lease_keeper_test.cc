#include "tracker/lease_keeper.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tracker/scheduler_parts_for_test.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class LeaseKeeperTest : public ::testing::Test {
 protected:
  // A RUNNING job held by tuner_ with one trial per config index, none queued.
  Job& JobWithTrials(const std::vector<int64_t>& indices, int32_t max_attempts = 3) {
    Job& job = parts_.SubmitJob(static_cast<int64_t>(indices.size()) + 1);
    job.stored.spec.set_max_attempts(max_attempts);
    job.tuner_worker = tuner_.id;
    tuner_.jobs.insert(job.stored.job_id);
    EXPECT_TRUE(parts_.lifecycle.Start(job).ok());
    parts_.ProposeConfigs(job, tuner_, indices);
    job.to_build.clear();
    return job;
  }

  SchedulerParts parts_;
  LeaseKeeper& leases_ = parts_.leases;
  Worker& tuner_ = parts_.AddWorker(proto::TUNER, "tuner");
  Worker& builder_ = parts_.AddWorker(proto::BUILDER, "builder", "", 4, "ipv4:10.0.0.1:1");
  Worker& agent_ = parts_.AddWorker(proto::AGENT, "agent", "cpu", 1, "ipv4:10.0.0.1:2");
};

TEST_F(LeaseKeeperTest, GrantAndEndCountTheLeaseOnWorkerJobAndHost) {
  Job& job = JobWithTrials({1});
  Trial& trial = job.trials.at(0);
  const std::string id = leases_.Grant(job, trial, builder_, Stage::kBuild, /*deadline=*/60);
  EXPECT_EQ(trial.state, TrialState::kBuilding);
  EXPECT_EQ(trial.lease_id, id);
  EXPECT_THAT(builder_.leases, ElementsAre(id));
  EXPECT_EQ(job.building, 1);
  EXPECT_EQ(leases_.BuildsOn("10.0.0.1"), 1);
  EXPECT_EQ(leases_.MeasuresOn("10.0.0.1"), 0);
  leases_.End(id);
  EXPECT_THAT(builder_.leases, IsEmpty());
  EXPECT_EQ(job.building, 0);
  EXPECT_EQ(leases_.BuildsOn("10.0.0.1"), 0);
  leases_.End(id);  // twice: a no-op
  EXPECT_EQ(job.building, 0);
}

TEST_F(LeaseKeeperTest, FindOnlyAnswersTheHolderForItsStage) {
  Job& job = JobWithTrials({1});
  const std::string id = leases_.Grant(job, job.trials.at(0), agent_, Stage::kMeasure, 60);
  ASSERT_NE(leases_.Find(agent_, id, Stage::kMeasure), nullptr);
  EXPECT_EQ(leases_.Find(agent_, id, Stage::kMeasure)->trial_id, 0);
  EXPECT_EQ(leases_.Find(agent_, id, Stage::kBuild), nullptr);
  EXPECT_EQ(leases_.Find(builder_, id, Stage::kMeasure), nullptr);
  EXPECT_EQ(leases_.Find(agent_, "L999", Stage::kMeasure), nullptr);
}

TEST_F(LeaseKeeperTest, LostWorkersTrialsGoBackToTheirQueuesWithAnAttemptCounted) {
  Job& job = JobWithTrials({1, 2});
  leases_.Grant(job, job.trials.at(0), builder_, Stage::kBuild, 60);
  leases_.Grant(job, job.trials.at(1), builder_, Stage::kBuild, 60);
  std::unique_ptr<Worker> lost = parts_.workers.Remove(builder_.id);
  leases_.RequeueAllOf(*lost, "builder \"builder\" lost: killed", RequeueReason::kWorkerLost);
  EXPECT_THAT(job.to_build, ElementsAre(1, 0));  // each to the front
  EXPECT_EQ(job.trials.at(0).attempts, 1);
  EXPECT_EQ(job.building, 0);
  EXPECT_EQ(parts_.metrics.requeues(RequeueReason::kWorkerLost), 2);
  EXPECT_EQ(parts_.store.LoadTrials(job.stored.job_id).value()[0].attempts, 1);
}

TEST_F(LeaseKeeperTest, GivesUpAfterMaxAttempts) {
  Job& job = JobWithTrials({1}, /*max_attempts=*/2);
  Trial& trial = job.trials.at(0);
  trial.attempts = 1;
  leases_.Grant(job, trial, agent_, Stage::kMeasure, 60);
  std::unique_ptr<Worker> lost = parts_.workers.Remove(agent_.id);
  leases_.RequeueAllOf(*lost, "agent \"agent\" lost: kill -9", RequeueReason::kWorkerLost);
  EXPECT_TRUE(trial.done);
  EXPECT_THAT(trial.result.error_msg(), HasSubstr("gave up after 2 attempts"));
  EXPECT_THAT(job.to_build, IsEmpty());
  EXPECT_THAT(job.to_measure, IsEmpty());
}

TEST_F(LeaseKeeperTest, ExpiredListsEveryLeasePastItsDeadline) {
  Job& job = JobWithTrials({1, 2});
  leases_.Grant(job, job.trials.at(0), builder_, Stage::kBuild, /*deadline=*/10);
  leases_.Grant(job, job.trials.at(1), agent_, Stage::kMeasure, /*deadline=*/30);
  EXPECT_THAT(leases_.Expired(/*now=*/5), IsEmpty());
  auto expired = leases_.Expired(/*now=*/20);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].first, builder_.id);
  EXPECT_THAT(expired[0].second, HasSubstr("lease expired: build of job"));
}

}  // namespace
}  // namespace tunefleet

#include "tracker/agent_calibration.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tracker/scheduler_parts_for_test.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

proto::Calibration Figures(double gflops, double noise) {
  proto::Calibration c;
  c.set_gflops(gflops);
  c.set_noise(noise);
  c.set_repeats(12);
  return c;
}

TEST(QuarantineReasonTest, PassesAnAgentLikeItsKey) {
  CalibrationPolicy policy;
  EXPECT_THAT(QuarantineReason(Figures(30, 0.01), 0, {}, policy), IsEmpty());
  EXPECT_THAT(
      QuarantineReason(Figures(30, 0.01), 31, {Figures(31, 0.01), Figures(29, 0.012)}, policy),
      IsEmpty());
  // Faster than its key is no reason.
  EXPECT_THAT(QuarantineReason(Figures(60, 0.01), 0, {Figures(30, 0.01)}, policy), IsEmpty());
}

TEST(QuarantineReasonTest, NamesANoisyAgent) {
  CalibrationPolicy policy;
  EXPECT_THAT(QuarantineReason(Figures(30, 0.09), 0, {}, policy),
              HasSubstr("noisy: calibration spread 9.0 % > 5.0 %"));
  // Within the absolute bound but far noisier than the key's others.
  EXPECT_THAT(
      QuarantineReason(Figures(30, 0.04), 0, {Figures(30, 0.005), Figures(30, 0.006)}, policy),
      HasSubstr("more than 5x its key's median"));
  // On a quiet key, a tiny spread is not "noisy" for being a multiple.
  EXPECT_THAT(QuarantineReason(Figures(30, 0.004), 0, {Figures(30, 0.001)}, policy), IsEmpty());
}

TEST(QuarantineReasonTest, NamesAnAgentSlowerThanItsKey) {
  CalibrationPolicy policy;
  const std::string reason = QuarantineReason(
      Figures(15, 0.01), 0, {Figures(30, 0.01), Figures(31, 0.01), Figures(29, 0.01)}, policy);
  EXPECT_THAT(reason, HasSubstr("slow: calibration 15.00 GFLOPS is 0.50x its key's median "
                                "(30.00 GFLOPS of 3 other agent(s))"));
  // Failed calibrations of others do not count as figures.
  proto::Calibration failed;
  failed.set_error("clock broke");
  EXPECT_THAT(QuarantineReason(Figures(15, 0.01), 0, {failed}, policy), IsEmpty());
}

TEST(QuarantineReasonTest, NamesDriftFromTheAgentsOwnFirstFigure) {
  CalibrationPolicy policy;
  EXPECT_THAT(QuarantineReason(Figures(24, 0.01), 30, {}, policy),
              HasSubstr("drifted: calibration 24.00 GFLOPS is -20.0 % from its first figure "
                        "(30.00 GFLOPS)"));
  EXPECT_THAT(QuarantineReason(Figures(27, 0.01), 30, {}, policy), IsEmpty());
}

TEST(QuarantineReasonTest, FailedOrImpossibleCalibrationsQuarantine) {
  CalibrationPolicy policy;
  proto::Calibration failed;
  failed.set_error("timing failed");
  EXPECT_THAT(QuarantineReason(failed, 0, {}, policy),
              HasSubstr("calibration failed: timing failed"));
  EXPECT_THAT(QuarantineReason(Figures(-3, 0.01), 0, {}, policy), HasSubstr("impossible"));
  EXPECT_THAT(QuarantineReason(Figures(30, std::nan("")), 0, {}, policy), HasSubstr("impossible"));
}

TEST(CalibrationPolicyTest, RefusesValuesOutOfRange) {
  CalibrationPolicy policy;
  EXPECT_TRUE(policy.Validate().ok());
  policy.min_relative_speed = 1.5;
  EXPECT_THAT(policy.Validate().message(), HasSubstr("min_relative_speed"));
  policy = CalibrationPolicy();
  policy.recheck_s = 0;
  EXPECT_THAT(policy.Validate().message(), HasSubstr("recheck_s"));
}

class AgentCalibrationsTest : public ::testing::Test {
 protected:
  Worker& AddCalibratingAgent(const std::string& name, const std::string& peer = "test") {
    Worker& agent = parts_.AddWorker(proto::AGENT, name, "cpu", 1, peer);
    agent.registration.set_calibrates(true);
    calibrations_.Admit(agent);
    return agent;
  }
  int Requests(const Worker& agent) {
    return static_cast<int>(
        SchedulerParts::outbox_of(agent).Take(proto::TrackerMessage::kCalibrate).size());
  }
  [[nodiscard]] absl::Status Answer(Worker& agent, double gflops, double noise) {
    return calibrations_.Calibrated(agent, Figures(gflops, noise), parts_.clock.NowSeconds(),
                                    parts_.clock.WallSeconds());
  }

  SchedulerParts parts_;
  CalibrationPolicy policy_;
  AgentCalibrations calibrations_{&policy_, &parts_.workers, &parts_.dispatcher, &parts_.leases,
                                  &parts_.metrics};
};

TEST_F(AgentCalibrationsTest, AnAgentMeasuresOnlyAfterItsFirstCalibrationPassed) {
  Worker& agent = AddCalibratingAgent("a");
  EXPECT_EQ(Requests(agent), 1);
  EXPECT_TRUE(agent.calibrating);
  EXPECT_FALSE(agent.free_listed);
  ASSERT_TRUE(Answer(agent, 30, 0.01).ok());
  EXPECT_TRUE(agent.free_listed);
  EXPECT_EQ(agent.baseline_gflops, 30);
  EXPECT_THAT(agent.quarantine, IsEmpty());
}

TEST_F(AgentCalibrationsTest, AgentsThatDoNotCalibrateAreFreeAtOnce) {
  Worker& agent = parts_.AddWorker(proto::AGENT, "old", "cpu");
  calibrations_.Admit(agent);
  EXPECT_EQ(Requests(agent), 0);
  EXPECT_TRUE(agent.free_listed);
  parts_.clock.AdvanceSeconds(10 * policy_.interval_s);
  calibrations_.RequestDue(parts_.clock.NowSeconds());
  EXPECT_EQ(Requests(agent), 0);
}

TEST_F(AgentCalibrationsTest, AThrottledAgentIsQuarantinedUntilALaterCalibrationPasses) {
  Worker& fast = AddCalibratingAgent("fast");
  ASSERT_TRUE(Answer(fast, 30, 0.01).ok());
  Worker& throttled = AddCalibratingAgent("throttled");
  ASSERT_TRUE(Answer(throttled, 12, 0.01).ok());
  EXPECT_THAT(throttled.quarantine, HasSubstr("slow: calibration 12.00 GFLOPS is 0.40x"));
  EXPECT_FALSE(throttled.free_listed);
  // Freeing it (as a finished lease would) does not put it back to work.
  parts_.dispatcher.MarkAgentFree(throttled);
  EXPECT_FALSE(throttled.free_listed);
  EXPECT_EQ(parts_.metrics.calibrated("cpu", /*quarantined=*/true), 1);

  Requests(fast);
  Requests(throttled);
  // Not yet due.
  parts_.clock.AdvanceSeconds(policy_.recheck_s / 2);
  calibrations_.RequestDue(parts_.clock.NowSeconds());
  EXPECT_EQ(Requests(throttled), 0);
  // Due for its recheck; the healthy agent is not due for a while.
  parts_.clock.AdvanceSeconds(policy_.recheck_s);
  calibrations_.RequestDue(parts_.clock.NowSeconds());
  EXPECT_EQ(Requests(throttled), 1);
  EXPECT_EQ(Requests(fast), 0);
  ASSERT_TRUE(Answer(throttled, 29, 0.01).ok());
  EXPECT_THAT(throttled.quarantine, IsEmpty());
  EXPECT_TRUE(throttled.free_listed);
}

TEST_F(AgentCalibrationsTest, ANoisyAgentIsQuarantinedAndDriftIsJudgedAgainstItsFirstFigure) {
  Worker& agent = AddCalibratingAgent("a");
  ASSERT_TRUE(Answer(agent, 30, 0.01).ok());
  parts_.clock.AdvanceSeconds(policy_.interval_s + 1);
  calibrations_.RequestDue(parts_.clock.NowSeconds());
  EXPECT_EQ(Requests(agent), 2);  // at registration, then periodic
  ASSERT_TRUE(Answer(agent, 30, 0.2).ok());
  EXPECT_THAT(agent.quarantine, HasSubstr("noisy"));
  parts_.clock.AdvanceSeconds(policy_.recheck_s + 1);
  calibrations_.RequestDue(parts_.clock.NowSeconds());
  ASSERT_EQ(Requests(agent), 1);
  ASSERT_TRUE(Answer(agent, 20, 0.01).ok());
  EXPECT_THAT(agent.quarantine, HasSubstr("drifted"));
}

TEST_F(AgentCalibrationsTest, RefusesACalibrationNobodyAskedFor) {
  Worker& agent = AddCalibratingAgent("a");
  ASSERT_TRUE(Answer(agent, 30, 0.01).ok());
  EXPECT_EQ(Answer(agent, 1, 0.5).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(agent.calibration->gflops(), 30);
  EXPECT_TRUE(agent.free_listed);
}

TEST_F(AgentCalibrationsTest, AgentsOfOneHostCalibrateOneAtATimeOnAQuietHost) {
  Worker& first = AddCalibratingAgent("first", "ipv4:10.0.0.9:1");
  Worker& second = AddCalibratingAgent("second", "ipv4:10.0.0.9:2");
  Worker& elsewhere = AddCalibratingAgent("elsewhere", "ipv4:10.0.0.10:1");
  EXPECT_EQ(Requests(first), 1);
  EXPECT_EQ(Requests(second), 0) << "its host is busy calibrating another agent";
  EXPECT_EQ(Requests(elsewhere), 1);
  EXPECT_TRUE(second.calibration_wanted);
  EXPECT_FALSE(second.free_listed);
  ASSERT_TRUE(Answer(first, 30, 0.01).ok());
  EXPECT_EQ(Requests(second), 1);
  ASSERT_TRUE(Answer(second, 30, 0.01).ok());
  EXPECT_TRUE(first.free_listed);
  EXPECT_TRUE(second.free_listed);
}

TEST_F(AgentCalibrationsTest, NoCalibrationWhileTheHostBuilds) {
  SchedulerOptions options;
  ASSERT_TRUE(options.isolate_measurements);
  Worker& agent = AddCalibratingAgent("a", "ipv4:10.0.0.7:2");
  ASSERT_TRUE(Answer(agent, 30, 0.01).ok());
  ASSERT_TRUE(agent.isolating);
  Worker& builder = parts_.AddWorker(proto::BUILDER, "b", "", 2, "ipv4:10.0.0.7:1");
  Worker& tuner = parts_.AddWorker(proto::TUNER, "t");
  Job& job = parts_.SubmitJob(4);
  job.tuner_worker = tuner.id;
  tuner.jobs.insert(job.stored.job_id);
  parts_.ProposeConfigs(job, tuner, {1});
  parts_.dispatcher.DispatchAll(parts_.clock.NowSeconds());
  ASSERT_EQ(parts_.leases.BuildsOn("10.0.0.7"), 1) << "builder " << builder.host;
  Requests(agent);
  parts_.clock.AdvanceSeconds(policy_.interval_s + 1);
  calibrations_.RequestDue(parts_.clock.NowSeconds());
  EXPECT_EQ(Requests(agent), 0);
}

}  // namespace
}  // namespace tunefleet

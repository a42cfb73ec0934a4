// Two tracker replicas on one PostgreSQL store, with real builder, agent and
// tuner processes on 127.0.0.1: kill -9 of the leader mid-job and mid model
// job, SIGSTOP of the leader past its lease, and a restart of PostgreSQL
// itself. Each time the workers and the client find the leader by
// themselves, and every job's records are exact: no trial lost, none
// measured twice; a measurement in flight at the kill is delivered to the
// new leader rather than done again.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <iostream>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "clients/cpp/fleet_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/fleet_launcher.h"
#include "tests/status_assertions.h"
#include "tracker/store/postgres_test_server.h"
#include "tuner_core/records/record.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

class TrackerHaTest : public ::testing::Test {
 protected:
  // Two replicas, one agent; the lease short enough for a test.
  void StartFleet() {
    absl::StatusOr<std::string> store = NewSharedTestDatabase();
    ASSERT_TRUE(store.ok()) << store.status();
    FleetLauncher::Options o;
    o.store = *store;
    o.trackers = 2;
    o.agents = 1;
    for (const char* flag : {"--lease_ttl_s=2", "--lease_check_s=0.25", "--standby_poll_s=0.2"})
      o.tracker_flags.push_back(flag);
    fleet_ = std::make_unique<FleetLauncher>(o);
    ASSERT_OK(fleet_->Start());
    first_ = WaitForLeaderAt(1);
    ASSERT_GE(first_, 0) << "no replica took the lease";
  }

  int LeaderAt(int epoch) const { return fleet_->LeaderAt(epoch); }
  int WaitForLeaderAt(int epoch) const {
    absl::StatusOr<int> leader = fleet_->WaitForLeaderAt(epoch, 30);
    return leader.ok() ? *leader : -1;
  }

  int64_t TrialsDone(const std::string& job_id) {
    absl::StatusOr<proto::JobStatus> s = fleet_->client().Get(job_id);
    return s.ok() ? s->trials_done() : -1;
  }
  void WaitForTrials(const std::string& job_id, int64_t n) {
    for (int i = 0; i < 1200 && TrialsDone(job_id) < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // Exactly n records of n distinct configs (of one task when task >= 0).
  void ExpectExact(const std::string& job_id, int64_t n, int task = -1) {
    absl::StatusOr<std::vector<std::string>> lines = fleet_->client().Export(job_id, task);
    ASSERT_TRUE(lines.ok()) << lines.status();
    EXPECT_EQ(static_cast<int64_t>(lines->size()), n) << "task " << task;
    std::set<int64_t> configs;
    for (const std::string& line : *lines) {
      absl::StatusOr<Record> record = Record::FromLine(line);
      ASSERT_TRUE(record.ok()) << record.status();
      configs.insert(record->config.value("index", int64_t{-1}));
    }
    EXPECT_EQ(static_cast<int64_t>(configs.size()), n) << "a config was measured twice";
  }

  // A dense job whose every config builds on any x86 host.
  proto::JobSpec DenseJob(int64_t n_trial) const {
    proto::JobSpec spec = fleet_->DenseJob(n_trial);
    spec.mutable_task()->set_template_name("dense_tiled");
    return spec;
  }

  std::unique_ptr<FleetLauncher> fleet_;
  int first_ = -1;
};

TEST_F(TrackerHaTest, KilledLeaderTheStandbyTakesOverAndTheJobCompletesExactlyOnce) {
  StartFleet();
  const int second = 1 - first_;
  EXPECT_THAT(fleet_->Log(FleetLauncher::TrackerName(second)), HasSubstr("standing by"));

  constexpr int64_t kTrials = 16;
  proto::JobStatus job = fleet_->client().Submit(DenseJob(kTrials)).value();
  WaitForTrials(job.job_id(), 4);
  const int64_t before = TrialsDone(job.job_id());
  ASSERT_LT(before, kTrials) << "the job finished before the leader could be killed";

  const auto killed = std::chrono::steady_clock::now();
  fleet_->tracker(first_).Kill(SIGKILL);
  fleet_->tracker(first_).Wait(10);
  ASSERT_EQ(WaitForLeaderAt(2), second) << "the standby did not take over";
  std::cout << "takeover: the standby led "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count()
            << " s after kill -9 of the leader (" << before << " of " << kTrials
            << " trials done)\n";

  // The client follows by itself (its first address may be the dead one's).
  absl::StatusOr<proto::JobStatus> done = fleet_->WaitForJob(job.job_id(), 240);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), proto::SUCCEEDED) << done->message();
  ExpectExact(job.job_id(), kTrials);
  EXPECT_THAT(fleet_->Log(FleetLauncher::TrackerName(second)),
              HasSubstr("resuming job " + job.job_id()));
  // Every worker found the new leader.
  EXPECT_EQ(fleet_->client().Devices().value().workers_size(), 3);

  // The old leader, restarted, stands by and names the new one.
  ASSERT_OK(fleet_->StartTracker(first_));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_THAT(fleet_->Log(FleetLauncher::TrackerName(first_)), HasSubstr("standing by"));
  EXPECT_EQ(LeaderAt(3), -1) << "the restarted replica took the lease from the leader";
}

// A measurement in flight when the leader dies is not done again: the agent
// finishes it, follows the new leader and delivers it there, and the new
// leader adopts it (its lease id is signed with the store's key), counted once.
TEST_F(TrackerHaTest, AMeasurementInFlightAtTheKillIsDeliveredToTheNewLeader) {
  StartFleet();
  const int second = 1 - first_;
  constexpr int64_t kTrials = 4;
  proto::JobSpec spec = DenseJob(kTrials);
  // Each measurement waits this long first: the kill lands inside one.
  spec.mutable_measure()->set_cooldown_interval_s(3);
  proto::JobStatus job = fleet_->client().Submit(spec).value();
  WaitForTrials(job.job_id(), 1);
  ASSERT_LT(TrialsDone(job.job_id()), kTrials);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // into the next cooldown
  fleet_->tracker(first_).Kill(SIGKILL);
  fleet_->tracker(first_).Wait(10);
  ASSERT_EQ(WaitForLeaderAt(2), second) << "the standby did not take over";
  absl::StatusOr<proto::JobStatus> done = fleet_->WaitForJob(job.job_id(), 240);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), proto::SUCCEEDED) << done->message();
  ExpectExact(job.job_id(), kTrials);
  EXPECT_THAT(fleet_->Log(FleetLauncher::TrackerName(second)),
              HasSubstr("adopted the measure result of an earlier tracker's lease"));
}

TEST_F(TrackerHaTest, KilledLeaderMidModelJobEveryTaskGetsExactlyItsBudget) {
  StartFleet();
  constexpr int64_t kPerTask = 6;
  proto::JobSpec spec = fleet_->DenseJob(3 * kPerTask);
  const proto::TaskSpec dense = spec.task();
  spec.clear_task();
  for (int m : {16, 32, 48}) {
    proto::JobTask* task = spec.add_tasks();
    *task->mutable_task() = dense;
    task->mutable_task()->set_template_name("dense_tiled");
    task->mutable_task()->set_workload_args_json(
        absl::StrCat(R"({"M":)", m, R"(,"N":48,"K":48,"layout":"NK"})"));
    task->set_weight(1);
  }
  spec.set_model("three dense layers");
  spec.set_trials_per_task(kPerTask);
  spec.set_task_policy("sequential");
  proto::JobStatus job = fleet_->client().Submit(spec).value();
  WaitForTrials(job.job_id(), 8);  // inside the second task
  ASSERT_LT(TrialsDone(job.job_id()), 3 * kPerTask) << "the job ended before the kill";
  fleet_->tracker(first_).Kill(SIGKILL);
  fleet_->tracker(first_).Wait(10);
  ASSERT_EQ(WaitForLeaderAt(2), 1 - first_);
  absl::StatusOr<proto::JobStatus> done = fleet_->WaitForJob(job.job_id(), 240);
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->state(), proto::SUCCEEDED) << done->message();
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(done->tasks(t).trials_done(), kPerTask) << "task " << t;
    ExpectExact(job.job_id(), kPerTask, t);
  }
}

TEST_F(TrackerHaTest, ALeaderStoppedPastItsLeaseIsReplacedAndStopsWhenItWakes) {
  StartFleet();
  const int second = 1 - first_;
  constexpr int64_t kTrials = 24;
  proto::JobStatus job = fleet_->client().Submit(DenseJob(kTrials)).value();
  WaitForTrials(job.job_id(), 4);
  ASSERT_LT(TrialsDone(job.job_id()), kTrials);

  // Stopped, its database session stays open: only the lease's running out
  // lets the standby in (ttl 2 s).
  fleet_->tracker(first_).Kill(SIGSTOP);
  ASSERT_EQ(WaitForLeaderAt(2), second) << "the standby did not take over a stopped leader";
  // The new leader acknowledges trials while the old one is stopped. A
  // stopped tracker's socket stays open and answers nothing: a client with a
  // short deadline leaves it for the next replica.
  absl::StatusOr<FleetAddress> address = ResolveFleet("", "", fleet_->dir());
  ASSERT_TRUE(address.ok()) << address.status();
  FleetClient quick(*address, /*deadline_s=*/2);
  int64_t at_takeover = -1;
  for (int i = 0; i < 100 && at_takeover < 0; ++i) {
    if (absl::StatusOr<proto::JobStatus> s = quick.Get(job.job_id()); s.ok()) {
      at_takeover = s->trials_done();
    }
  }
  ASSERT_GE(at_takeover, 0) << "no replica answered";
  for (int i = 0; i < 600; ++i) {
    absl::StatusOr<proto::JobStatus> s = quick.Get(job.job_id());
    if (s.ok() && s->trials_done() >= std::min(kTrials, at_takeover + 2)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  // Woken, the old leader finds its lease gone and exits (75) without
  // serving again; any write it tries meanwhile is refused by its epoch.
  fleet_->tracker(first_).Kill(SIGCONT);
  const std::optional<int> status = fleet_->tracker(first_).Wait(15);
  ASSERT_TRUE(status.has_value()) << "the woken leader kept running";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 75) << *status;
  EXPECT_THAT(fleet_->Log(FleetLauncher::TrackerName(first_)), HasSubstr("lost the leader lease"));

  absl::StatusOr<proto::JobStatus> done = fleet_->WaitForJob(job.job_id(), 240);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), proto::SUCCEEDED) << done->message();
  ExpectExact(job.job_id(), kTrials);
}

TEST_F(TrackerHaTest, APostgresRestartMidJobLosesNothing) {
  StartFleet();
  constexpr int64_t kTrials = 20;
  proto::JobStatus job = fleet_->client().Submit(DenseJob(kTrials)).value();
  WaitForTrials(job.job_id(), 4);
  ASSERT_LT(TrialsDone(job.job_id()), kTrials);
  // Every session drops: the leader cannot vouch for its lease and stops;
  // a replica leads again once the database is back.
  absl::StatusOr<PostgresTestServer*> pg = SharedPostgresTestServer();
  ASSERT_TRUE(pg.ok()) << pg.status();
  ASSERT_OK((*pg)->KillAndRestart());
  ASSERT_GE(WaitForLeaderAt(2), 0) << "no replica led after the database came back";
  // The replica that stopped comes back (as its supervisor would start it).
  for (int i = 0; i < 2; ++i) {
    if (!fleet_->tracker(i).running()) ASSERT_OK(fleet_->StartTracker(i));
  }
  absl::StatusOr<proto::JobStatus> done = fleet_->WaitForJob(job.job_id(), 240);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), proto::SUCCEEDED) << done->message();
  ExpectExact(job.job_id(), kTrials);
}

}  // namespace
}  // namespace tunefleet

// Two tracker replicas on one PostgreSQL store, with real builder, agent and
// tuner processes on 127.0.0.1: kill -9 of the leader mid-job, the standby
// takes over, the workers and the client find it by themselves, and the job
// completes with every trial counted once.
#include <signal.h>

#include <chrono>
#include <iostream>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/fleet_launcher.h"
#include "tests/status_assertions.h"
#include "tracker/store/postgres_test_server.h"
#include "tuner_core/records/record.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

// The replica whose log says it took epoch `epoch`; -1 until one does.
int LeaderAt(const FleetLauncher& fleet, int trackers, int epoch) {
  const std::string line = absl::StrCat("took the leader lease at epoch ", epoch, ":");
  for (int i = 0; i < trackers; ++i) {
    if (fleet.Log(FleetLauncher::TrackerName(i)).find(line) != std::string::npos) return i;
  }
  return -1;
}

int WaitForLeaderAt(const FleetLauncher& fleet, int trackers, int epoch) {
  for (int i = 0; i < 600; ++i) {
    const int leader = LeaderAt(fleet, trackers, epoch);
    if (leader >= 0) return leader;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

TEST(TrackerHaTest, KilledLeaderTheStandbyTakesOverAndTheJobCompletesExactlyOnce) {
  absl::StatusOr<std::unique_ptr<PostgresTestServer>> pg = PostgresTestServer::Start();
  ASSERT_TRUE(pg.ok()) << pg.status();
  absl::StatusOr<std::string> store = (*pg)->NewDatabase("tracker_ha");
  ASSERT_TRUE(store.ok()) << store.status();

  FleetLauncher::Options o;
  o.store = *store;
  o.trackers = 2;
  o.agents = 1;
  FleetLauncher fleet(o);
  ASSERT_OK(fleet.Start());
  const int first = WaitForLeaderAt(fleet, 2, 1);
  ASSERT_GE(first, 0) << "no replica took the lease";
  const int second = 1 - first;
  EXPECT_THAT(fleet.Log(FleetLauncher::TrackerName(second)), HasSubstr("standing by"));

  constexpr int64_t kTrials = 16;
  proto::JobSpec spec = fleet.DenseJob(kTrials);
  spec.mutable_task()->set_template_name("dense_tiled");  // every config builds on any x86 host
  proto::JobStatus job = fleet.client().Submit(spec).value();
  for (int i = 0; i < 600; ++i) {
    absl::StatusOr<proto::JobStatus> s = fleet.client().Get(job.job_id());
    if (s.ok() && s->trials_done() >= 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  proto::JobStatus before = fleet.client().Get(job.job_id()).value();
  ASSERT_LT(before.trials_done(), kTrials) << "the job finished before the leader could be killed";

  const auto killed = std::chrono::steady_clock::now();
  fleet.tracker(first).Kill(SIGKILL);
  fleet.tracker(first).Wait(10);
  ASSERT_EQ(WaitForLeaderAt(fleet, 2, 2), second) << "the standby did not take over";
  const double takeover_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  std::cout << "takeover: the standby led " << takeover_s << " s after kill -9 of the leader ("
            << before.trials_done() << " of " << kTrials << " trials done)\n";

  // The client follows by itself (its first address is the dead leader's).
  absl::StatusOr<proto::JobStatus> done = fleet.WaitForJob(job.job_id(), 240);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), proto::SUCCEEDED) << done->message();
  absl::StatusOr<std::vector<std::string>> lines = fleet.client().Export(job.job_id());
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_EQ(static_cast<int64_t>(lines->size()), kTrials);
  std::set<int64_t> configs;
  for (const std::string& line : *lines) {
    absl::StatusOr<Record> record = Record::FromLine(line);
    ASSERT_TRUE(record.ok()) << record.status();
    configs.insert(record->config.value("index", int64_t{-1}));
  }
  EXPECT_EQ(static_cast<int64_t>(configs.size()), kTrials) << "a config was measured twice";
  EXPECT_THAT(fleet.Log(FleetLauncher::TrackerName(second)),
              HasSubstr("resuming job " + job.job_id()));
  std::cout << "job done "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count()
            << " s after the kill\n";
  // Every worker found the new leader.
  EXPECT_EQ(fleet.client().Devices().value().workers_size(), 3);

  // The old leader, restarted, stands by and names the new one.
  ASSERT_OK(fleet.StartTracker(first));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_THAT(fleet.Log(FleetLauncher::TrackerName(first)), HasSubstr("standing by"));
  EXPECT_EQ(LeaderAt(fleet, 2, 3), -1) << "the restarted replica took the lease from the leader";
}

}  // namespace
}  // namespace tunefleet

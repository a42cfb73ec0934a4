// Model jobs end to end (issue 16): one job carrying several tasks with their
// weights, on real tracker, builder, agent and tuner processes on 127.0.0.1;
// the task scheduler's budget and selective tuning's top-k as the tracker
// records them, per-task best and export over gRPC, and a kill -9 of the
// tracker in the middle of a model job.
#include <signal.h>

#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cli/fleet_commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/fleet_launcher.h"
#include "tests/status_assertions.h"
#include "tuner_core/records/record.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

// A model job of dense tasks with these M (N = K = 48) and weights.
proto::JobSpec ModelJob(FleetLauncher& fleet, const std::vector<std::pair<int, double>>& tasks,
                        int64_t trials_per_task) {
  proto::JobSpec spec = fleet.DenseJob(trials_per_task * static_cast<int64_t>(tasks.size()));
  const proto::TaskSpec dense = spec.task();
  spec.clear_task();
  for (const auto& [m, weight] : tasks) {
    proto::JobTask* t = spec.add_tasks();
    *t->mutable_task() = dense;
    t->mutable_task()->set_workload_args_json(
        absl::StrCat(R"({"M":)", m, R"(,"N":48,"K":48,"layout":"NK"})"));
    t->set_weight(weight);
  }
  spec.set_model("three dense layers");
  spec.set_trials_per_task(trials_per_task);
  return spec;
}

// The records of one task of the job, checked to be that task's.
std::vector<Record> TaskRecords(FleetLauncher& fleet, const std::string& job_id, int task, int m) {
  std::vector<Record> out;
  absl::StatusOr<std::vector<std::string>> lines = fleet.client().Export(job_id, task);
  EXPECT_TRUE(lines.ok()) << lines.status();
  if (!lines.ok()) return out;
  for (const std::string& l : *lines) {
    absl::StatusOr<Record> r = Record::FromLine(l);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) continue;
    EXPECT_EQ(r->workload_args.value("M", -1), m) << l;
    out.push_back(*std::move(r));
  }
  return out;
}

std::set<int64_t> Configs(const std::vector<Record>& records) {
  std::set<int64_t> configs;
  for (const Record& r : records) configs.insert(r.config.value("index", int64_t{-1}));
  return configs;
}

TEST(ModelJobTest, SequentialBudgetSurvivesATrackerKillAndEachTaskHasItsRecords) {
  FleetLauncher fleet(FleetLauncher::Options{});
  ASSERT_OK(fleet.Start());
  constexpr int64_t kPerTask = 6;
  proto::JobSpec spec = ModelJob(fleet, {{16, 1}, {32, 4}, {48, 1}}, kPerTask);
  spec.set_task_policy("sequential");
  proto::JobStatus job = fleet.client().Submit(spec).value();
  ASSERT_EQ(job.tasks_size(), 3);
  for (int i = 0; i < 600; ++i) {
    absl::StatusOr<proto::JobStatus> s = fleet.client().Get(job.job_id());
    if (s.ok() && s->trials_done() >= 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  proto::JobStatus before = fleet.client().Get(job.job_id()).value();
  ASSERT_LT(before.trials_done(), 3 * kPerTask) << "the job ended before the kill";
  fleet.tracker().Kill(SIGKILL);
  fleet.tracker().Wait(10);
  ASSERT_OK(fleet.StartTracker());
  proto::JobStatus done = fleet.WaitForJob(job.job_id(), 240).value();
  ASSERT_EQ(done.state(), proto::SUCCEEDED) << done.message();
  EXPECT_THAT(fleet.Log("tracker"), HasSubstr("resuming job " + job.job_id()));

  // Every task got exactly its budget, each config once, its own workload.
  double latency = 0;
  const int ms[] = {16, 32, 48};
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(done.tasks(t).trials_done(), kPerTask) << "task " << t;
    std::vector<Record> records = TaskRecords(fleet, job.job_id(), t, ms[t]);
    EXPECT_EQ(static_cast<int64_t>(records.size()), kPerTask);
    EXPECT_EQ(static_cast<int64_t>(Configs(records).size()), kPerTask) << "measured twice";
    latency += done.tasks(t).weight() * done.tasks(t).best_cost_s();
  }
  EXPECT_EQ(done.untuned_tasks(), 0);
  EXPECT_NEAR(done.estimated_latency_s(), latency, 1e-12);

  // Best per task; a model job's best needs the task named.
  proto::BestConfigRequest best;
  best.set_job_id(job.job_id());
  absl::StatusOr<proto::BestConfigResponse> whole = fleet.client().Best(best);
  ASSERT_FALSE(whole.ok());
  EXPECT_THAT(whole.status().message(), HasSubstr("name one with task_index"));
  best.set_task_index(1);
  proto::BestConfigResponse second = fleet.client().Best(best).value();
  EXPECT_EQ(Record::FromLine(second.record_line()).value().workload_args.value("M", -1), 32);
  EXPECT_NEAR(second.gflops(), done.tasks(1).best_gflops(), 1e-6 * second.gflops());
  best.set_task_index(7);
  EXPECT_THAT(fleet.client().Best(best).status().message(), HasSubstr("has no task 7"));
  EXPECT_EQ(fleet.client().Export(job.job_id()).value().size(), 3 * kPerTask);
}

TEST(ModelJobTest, SelectiveDependentsMeasureTheirRepresentativesTopK) {
  FleetLauncher fleet(FleetLauncher::Options{});
  ASSERT_OK(fleet.Start());
  constexpr int64_t kPerTask = 6;
  // Two layers of one shape and weight: one cluster, one representative.
  proto::JobSpec spec = ModelJob(fleet, {{32, 1}, {32, 1}}, kPerTask);
  spec.set_selective("top2");
  proto::JobStatus job = fleet.client().Submit(spec).value();
  proto::JobStatus done = fleet.WaitForJob(job.job_id(), 240).value();
  ASSERT_EQ(done.state(), proto::SUCCEEDED) << done.message();
  EXPECT_THAT(done.message(), HasSubstr("search ended"));
  const int64_t a = done.tasks(0).trials_done();
  const int64_t b = done.tasks(1).trials_done();
  EXPECT_EQ(std::max(a, b), kPerTask);
  EXPECT_EQ(std::min(a, b), 2) << "the dependent measures its representative's top 2";
  EXPECT_EQ(done.trials_done(), kPerTask + 2);
  // The dependent's configs are among the representative's.
  const int rep = a > b ? 0 : 1;
  const std::set<int64_t> rep_configs = Configs(TaskRecords(fleet, job.job_id(), rep, 32));
  for (int64_t c : Configs(TaskRecords(fleet, job.job_id(), 1 - rep, 32))) {
    EXPECT_TRUE(rep_configs.count(c)) << "config " << c << " is not one of the representative's";
  }
}

TEST(ModelJobTest, WatchGoesOnAcrossATrackerRestart) {
  FleetLauncher fleet(FleetLauncher::Options{});
  ASSERT_OK(fleet.Start());
  constexpr int64_t kPerTask = 8;
  proto::JobSpec spec = ModelJob(fleet, {{16, 1}, {32, 1}}, kPerTask);
  spec.set_task_policy("round_robin");
  proto::JobStatus job = fleet.client().Submit(spec).value();
  std::ostringstream out;
  absl::Status watched = absl::UnknownError("not run");
  std::thread watcher([&] { watched = RunWatch(fleet.client(), job.job_id(), false, out); });
  for (int i = 0; i < 600; ++i) {
    absl::StatusOr<proto::JobStatus> s = fleet.client().Get(job.job_id());
    if (s.ok() && s->trials_done() >= 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  fleet.tracker().Kill(SIGKILL);
  fleet.tracker().Wait(10);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_OK(fleet.StartTracker());
  watcher.join();
  EXPECT_TRUE(watched.ok()) << watched << "\n" << out.str();
  EXPECT_THAT(out.str(), HasSubstr("reconnecting"));
  EXPECT_THAT(out.str(), HasSubstr(job.job_id() + " SUCCEEDED"));
  EXPECT_THAT(out.str(), HasSubstr("estimated latency"));
}

}  // namespace
}  // namespace tunefleet

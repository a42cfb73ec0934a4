#include "tracker/metrics.h"

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/metrics_testing.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Fills every family so each has at least one series.
void ReportSomething(TrackerMetrics& metrics) {
  metrics.SetWorkers({{WorkerRole::kAgent, "x86-avx2", 1, 2}, {WorkerRole::kBuilder, "", 4, 0}});
  metrics.SetQueues(
      {{QueueStage::kBuild, "", 3, 0.5}, {QueueStage::kMeasure, "x86-avx2", 7, 2.25}});
  JobStats jobs;
  jobs.of(PriorityClass::kOne).running = 2;
  jobs.of(PriorityClass::kOne).succeeded = 1;
  jobs.of(PriorityClass::kOne).trials_done = 150;
  jobs.of(PriorityClass::kOne).trials_target = 400;
  jobs.of(PriorityClass::kEightAndUp).queued = 1;
  jobs.of(PriorityClass::kEightAndUp).trials_target = 50;
  jobs.best_gflops = {{"llvm -mcpu=skylake", 812.5}};
  jobs.model_jobs_running = 1;
  jobs.model_tasks_tuned = 9;
  jobs.model_tasks_untuned = 3;
  metrics.SetJobs(jobs);
  metrics.TrialFinished(0);
  metrics.TrialFinished(5);
  metrics.Requeued(RequeueReason::kLeaseExpired);
  metrics.ObserveBuild(0.8);
  metrics.ObserveMeasure("x86-avx2", 0.3);
  metrics.ObserveDispatch(QueueStage::kMeasure, 120e-6);
  metrics.MessageIn(WorkerRole::kAgent);
  metrics.MessageOut(WorkerRole::kTuner);
  metrics.Rejected("unauthenticated");
}

// The sample lines of the exposition: "name{labels} value".
std::vector<std::string> SampleLines(const std::string& text) {
  std::vector<std::string> samples;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!line.empty() && line[0] != '#') samples.emplace_back(line);
  }
  return samples;
}

TEST(TrackerMetricsTest, ExportsEveryFamilyWithItsType) {
  TrackerMetrics metrics;
  ReportSomething(metrics);
  const std::string text = metrics.Serialize();
  for (const char* gauge :
       {"tunefleet_workers", "tunefleet_queue_depth", "tunefleet_queue_oldest_age_seconds",
        "tunefleet_jobs", "tunefleet_job_trials", "tunefleet_job_best_gflops",
        "tunefleet_model_jobs", "tunefleet_model_job_tasks"}) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat("# TYPE ", gauge, " gauge\n")));
  }
  EXPECT_THAT(text, HasSubstr("tunefleet_model_jobs{state=\"running\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("tunefleet_model_job_tasks{state=\"untuned\"} 3\n"));
  for (const char* counter :
       {"tunefleet_trials_total", "tunefleet_trial_requeues_total",
        "tunefleet_stream_messages_total", "tunefleet_rejected_messages_total"}) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat("# TYPE ", counter, " counter\n")));
  }
  for (const char* histogram :
       {"tunefleet_build_duration_seconds", "tunefleet_measure_duration_seconds",
        "tunefleet_dispatch_latency_seconds"}) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat("# TYPE ", histogram, " histogram\n")));
  }
  EXPECT_THAT(text,
              HasSubstr(R"(tunefleet_workers{device_key="x86-avx2",role="agent",state="busy"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_queue_depth{device_key="x86-avx2",stage="measure"} 7)"));
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_trials_total{result="wrong_answer"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_trial_requeues_total{reason="lease_expired"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_job_trials{priority_class="1",state="target"} 400)"));
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_job_trials{priority_class="8+",state="target"} 50)"));
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_jobs{priority_class="1",state="running"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_jobs{priority_class="8+",state="queued"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_job_best_gflops{target="llvm -mcpu=skylake"} 812.5)"));
  EXPECT_THAT(text,
              HasSubstr(R"(tunefleet_stream_messages_total{direction="out",role="tuner"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_rejected_messages_total{reason="unauthenticated"} 1)"));
  EXPECT_THAT(text,
              HasSubstr(R"(tunefleet_measure_duration_seconds_count{device_key="x86-avx2"} 1)"));
}

TEST(TrackerMetricsTest, FixedLabelSetsExistAtZeroFromTheStart) {
  TrackerMetrics metrics;
  const std::string text = metrics.Serialize();
  for (const char* result :
       {"no_error", "instantiation_error", "compile_host", "compile_device", "runtime_device",
        "wrong_answer", "build_timeout", "run_timeout", "unknown"}) {
    EXPECT_THAT(text,
                HasSubstr(absl::StrCat("tunefleet_trials_total{result=\"", result, "\"} 0\n")));
  }
  EXPECT_THAT(text, HasSubstr("tunefleet_trial_requeues_total{reason=\"worker_lost\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("tunefleet_dispatch_latency_seconds_count{stage=\"build\"} 0\n"));
  for (const char* priority_class : {"1", "2-3", "4-7", "8+"}) {
    for (const char* state : {"queued", "running", "succeeded", "failed", "cancelled"}) {
      EXPECT_THAT(text, HasSubstr(absl::StrCat("tunefleet_jobs{priority_class=\"", priority_class,
                                               "\",state=\"", state, "\"} 0\n")));
    }
    for (const char* state : {"done", "target"}) {
      EXPECT_THAT(text, HasSubstr(absl::StrCat("tunefleet_job_trials{priority_class=\"",
                                               priority_class, "\",state=\"", state, "\"} 0\n")));
    }
  }
  EXPECT_THAT(text, HasSubstr("tunefleet_model_jobs{state=\"running\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("tunefleet_model_job_tasks{state=\"untuned\"} 0\n"));
}

TEST(TrackerMetricsTest, OutOfRangeErrorNumbersCountAsUnknown) {
  TrackerMetrics metrics;
  metrics.TrialFinished(8);
  metrics.TrialFinished(42);
  metrics.TrialFinished(-1);
  EXPECT_THAT(metrics.Serialize(), HasSubstr("tunefleet_trials_total{result=\"unknown\"} 3\n"));
}

TEST(TrackerMetricsTest, SetWorkersReplacesTheWholeSet) {
  TrackerMetrics metrics;
  metrics.SetWorkers({{WorkerRole::kAgent, "x86-avx2", 1, 1}});
  metrics.SetWorkers({{WorkerRole::kAgent, "rk3399", 2, 0}, {WorkerRole::kAgent, "rk3399", 1, 3}});
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text,
              HasSubstr(R"(tunefleet_workers{device_key="x86-avx2",role="agent",state="free"} 0)"));
  EXPECT_THAT(text,
              HasSubstr(R"(tunefleet_workers{device_key="x86-avx2",role="agent",state="busy"} 0)"));
  EXPECT_THAT(text,
              HasSubstr(R"(tunefleet_workers{device_key="rk3399",role="agent",state="free"} 3)"));
  EXPECT_THAT(text,
              HasSubstr(R"(tunefleet_workers{device_key="rk3399",role="agent",state="busy"} 3)"));
}

TEST(TrackerMetricsTest, UsersShowTheirUsageAndWhatHoldsThem) {
  TrackerMetrics metrics;
  metrics.SetUsers({{"tf_a", 2, 300, 1, "trials_per_hour"}, {"tf_b", 1, 5, 0, ""}});
  metrics.SetUsers({{"tf_a", 2, 300, 1, "trials_per_hour"}});  // tf_b's jobs ended
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_user_jobs_in_flight{user="tf_a"} 2)"));
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_user_trials_last_hour{user="tf_a"} 300)"));
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_user_quota_held{user="tf_a"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_user_jobs_in_flight{user="tf_b"} 0)"));
}

TEST(TrackerMetricsTest, SetQueuesZeroesQueuesThatDisappear) {
  TrackerMetrics metrics;
  metrics.SetQueues({{QueueStage::kMeasure, "gpu", 5, 9.5}});
  metrics.SetQueues({});
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_queue_depth{device_key="gpu",stage="measure"} 0)"));
  EXPECT_THAT(
      text, HasSubstr(R"(tunefleet_queue_oldest_age_seconds{device_key="gpu",stage="measure"} 0)"));
}

TEST(TrackerMetricsTest, SetJobsDropsTargetsNoLongerReported) {
  TrackerMetrics metrics;
  JobStats jobs;
  jobs.best_gflops = {{"cuda -arch=sm_80", 5000}, {"llvm -mtriple=aarch64", 20}};
  metrics.SetJobs(jobs);
  jobs.best_gflops = {{"cuda -arch=sm_80", 5100}};
  metrics.SetJobs(jobs);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr(R"(tunefleet_job_best_gflops{target="cuda -arch=sm_80"} 5100)"));
  EXPECT_THAT(text, Not(HasSubstr("aarch64")));
}

TEST(TrackerMetricsTest, UsesOnlyConventionalNamesAndFixedLabels) {
  TrackerMetrics metrics;
  ReportSomething(metrics);
  const std::set<std::string> allowed = {"device_key", "stage",         "result", "reason",
                                         "state",      "role",          "target", "direction",
                                         "le",         "priority_class"};
  for (const std::string& sample : SampleLines(metrics.Serialize())) {
    EXPECT_TRUE(absl::StartsWith(sample, "tunefleet_")) << sample;
    const size_t open = sample.find('{');
    if (open == std::string::npos) continue;
    const size_t close = sample.rfind('}');
    ASSERT_NE(close, std::string::npos) << sample;
    // Label values here hold no commas or '='; split on them.
    for (absl::string_view pair : absl::StrSplit(sample.substr(open + 1, close - open - 1), ',')) {
      const std::string name(pair.substr(0, pair.find('=')));
      EXPECT_TRUE(allowed.count(name)) << "label '" << name << "' in " << sample;
    }
  }
}

TEST(TrackerMetricsTest, TakesReportsFromManyThreads) {
  TrackerMetrics metrics;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&metrics, t] {
      for (int i = 0; i < 1000; ++i) {
        metrics.TrialFinished(0);
        metrics.ObserveMeasure(t % 2 == 0 ? "even" : "odd", 0.01);
        metrics.Rejected(t % 2 == 0 ? "stale_lease" : "unauthenticated");
        if (i % 100 == 0) metrics.SetWorkers({{WorkerRole::kAgent, "even", i, t}});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("tunefleet_trials_total{result=\"no_error\"} 4000\n"));
  EXPECT_THAT(text,
              HasSubstr("tunefleet_measure_duration_seconds_count{device_key=\"even\"} 2000\n"));
  EXPECT_THAT(text, HasSubstr("tunefleet_rejected_messages_total{reason=\"stale_lease\"} 2000\n"));
}

TEST(PromtoolTest, AcceptsTheExposition) {
  if (!PromtoolInstalled()) {
    GTEST_SKIP() << kPromtoolPath << " not installed (Debian package 'prometheus'); lint not run";
  }
  TrackerMetrics metrics;
  ReportSomething(metrics);
  const absl::Status lint = PromtoolCheckMetrics(metrics.Serialize());
  EXPECT_TRUE(lint.ok()) << lint;
}

}  // namespace
}  // namespace tunefleet

// The fleet end to end: real tracker, builder, agent and tuner processes on
// 127.0.0.1 talking gRPC, and what happens when they die.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/fleet_launcher.h"
#include "tests/status_assertions.h"
#include "tuner_core/records/record.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

std::vector<Record> Records(FleetLauncher& fleet, const std::string& job_id) {
  std::vector<Record> out;
  absl::StatusOr<std::vector<std::string>> lines = fleet.client().Export(job_id);
  EXPECT_TRUE(lines.ok()) << lines.status();
  if (!lines.ok()) return out;
  for (const std::string& l : *lines) {
    absl::StatusOr<Record> r = Record::FromLine(l);
    EXPECT_TRUE(r.ok()) << r.status() << " in " << l;
    if (r.ok()) out.push_back(*std::move(r));
  }
  return out;
}

// Exactly `n` records with `n` distinct configs, all measured successfully
// (or refused at build time because the host lacks a vector width).
// The three configs of dense_fault.test (none, segv, hang), measured with
// `timeout_s`; the fleet needs enable_test_templates.
proto::JobSpec FaultJob(const FleetLauncher& fleet, double timeout_s) {
  proto::JobSpec spec = fleet.DenseJob(3);
  spec.mutable_task()->set_template_name("dense_fault.test");
  spec.set_tuner("grid");
  spec.mutable_measure()->set_timeout_s(timeout_s);
  return spec;
}

// A dense job whose every config builds on any x86 host: dense_tiled has no
// register tile to outgrow (the default template's random configs are often
// tiles AVX2's 16 registers cannot hold, which the builders refuse).
proto::JobSpec AnyHostDenseJob(const FleetLauncher& fleet, int64_t n_trial,
                               const std::string& shape = "48,48,48") {
  proto::JobSpec spec = fleet.DenseJob(n_trial, shape);
  spec.mutable_task()->set_template_name("dense_tiled");
  return spec;
}

void ExpectExactlyOnce(const std::vector<Record>& records, int64_t n) {
  EXPECT_EQ(static_cast<int64_t>(records.size()), n);
  std::set<int64_t> configs;
  int ok = 0;
  for (const Record& r : records) {
    configs.insert(r.config.value("index", int64_t{-1}));
    if (r.result.error_no == MeasureErrorNo::kInstantiationError) continue;
    EXPECT_EQ(r.result.error_no, MeasureErrorNo::kNoError) << r.result.error_msg;
    ++ok;
  }
  EXPECT_GT(ok, 0);
  EXPECT_EQ(static_cast<int64_t>(configs.size()), n) << "a config was measured twice";
}

bool AnyBusy(const proto::ListDevicesResponse& d, proto::WorkerRole role, const std::string& name) {
  for (const auto& w : d.workers()) {
    if (w.role() == role && w.name() == name && w.leases() > 0) return true;
  }
  return false;
}

// Every agent's first calibration passed (none calibrating or quarantined):
// a fleet whose agents all measure. On this 2-core machine an agent that
// calibrated while the other processes started may be quarantined at first
// and freed by its recheck (FleetLauncher's tracker rechecks every 2 s).
std::string WaitForAgentsFree(FleetLauncher& fleet, int agents) {
  absl::StatusOr<proto::ListDevicesResponse> devices = fleet.WaitForDevices(
      [agents](const proto::ListDevicesResponse& d) {
        int free = 0;
        for (const auto& w : d.workers()) free += w.role() == proto::AGENT && w.state() == "free";
        return free == agents;
      },
      60);
  if (devices.ok()) return "";
  std::string states = std::string(devices.status().message());
  absl::StatusOr<proto::ListDevicesResponse> now = fleet.client().Devices();
  if (now.ok()) {
    for (const auto& w : now->workers()) {
      if (w.role() == proto::AGENT) {
        absl::StrAppend(&states, "; ", w.name(), " ", w.state(), " ", w.quarantine());
      }
    }
  }
  return states;
}

TEST(FleetTest, TwoJobsOnOneKeyShareItAndBothComplete) {
  FleetLauncher::Options o;
  o.builders = 2;
  o.agents = 2;
  FleetLauncher fleet(o);
  ASSERT_OK(fleet.Start());
  ASSERT_EQ(WaitForAgentsFree(fleet, 2), "");
  constexpr int64_t kTrials = 16;
  proto::JobStatus a = fleet.client().Submit(fleet.DenseJob(kTrials, "48,48,48")).value();
  proto::JobStatus b = fleet.client().Submit(fleet.DenseJob(kTrials, "40,56,24")).value();
  proto::JobStatus da = fleet.WaitForJob(a.job_id(), 240).value();
  proto::JobStatus db = fleet.WaitForJob(b.job_id(), 240).value();
  EXPECT_EQ(da.state(), proto::SUCCEEDED) << da.message();
  EXPECT_EQ(db.state(), proto::SUCCEEDED) << db.message();
  std::vector<Record> ra = Records(fleet, a.job_id());
  std::vector<Record> rb = Records(fleet, b.job_id());
  ExpectExactlyOnce(ra, kTrials);
  ExpectExactlyOnce(rb, kTrials);
  // Neither waited for the other: each job had trials finish before the
  // other job's last one.
  auto first = [](const std::vector<Record>& r) {
    double t = 1e300;
    for (const auto& x : r) t = std::min(t, x.result.timestamp);
    return t;
  };
  auto last = [](const std::vector<Record>& r) {
    double t = 0;
    for (const auto& x : r) t = std::max(t, x.result.timestamp);
    return t;
  };
  EXPECT_LT(first(ra), last(rb));
  EXPECT_LT(first(rb), last(ra));
  EXPECT_GT(da.best_gflops(), 0);
  // One truth per key: each winner's validation passes ran on both agents.
  for (const proto::JobStatus& s : {da, db}) {
    EXPECT_THAT(s.confirmation(),
                ::testing::AnyOf(HasSubstr("confirmed on 2 agents"), HasSubstr("agents disagree")))
        << s.job_id();
  }
  // Both agents measured.
  proto::ListDevicesResponse devices = fleet.client().Devices().value();
  for (const auto& w : devices.workers()) {
    if (w.role() == proto::AGENT) {
      EXPECT_GT(w.completed(), 0) << w.name();
    }
  }
}

TEST(FleetTest, TheReportedBestIsValidatedAndTheRecordsKeepBothFigures) {
  FleetLauncher fleet(FleetLauncher::Options{});
  ASSERT_OK(fleet.Start());
  proto::JobSpec spec = AnyHostDenseJob(fleet, 8, "64,64,64");
  spec.set_validate_top_k(3);
  spec.set_validation_passes(2);
  proto::JobStatus job = fleet.client().Submit(spec).value();
  proto::JobStatus done = fleet.WaitForJob(job.job_id(), 240).value();
  ASSERT_EQ(done.state(), proto::SUCCEEDED) << done.message();
  EXPECT_THAT(done.message(), HasSubstr("validated"));
  EXPECT_EQ(done.trials_done(), 8);
  EXPECT_EQ(done.best_figure(), "validated");
  EXPECT_EQ(done.validations_total(), 6);
  EXPECT_EQ(done.validations_done(), 6);
  ASSERT_EQ(done.tasks_size(), 1);
  EXPECT_EQ(done.tasks(0).best_validation_passes(), 2);
  EXPECT_GT(done.best_search_cost_s(), 0);
  // Validation measurements are not search records: 8 lines, 3 validated.
  std::vector<Record> records = Records(fleet, job.job_id());
  ASSERT_EQ(records.size(), 8u);
  const Record* winner = nullptr;
  for (const Record& r : records) {
    if (!r.validated()) continue;
    EXPECT_EQ(r.validation->pass_costs.size(), 2u);
    if (winner == nullptr || r.ReportedCost() < winner->ReportedCost()) winner = &r;
  }
  ASSERT_NE(winner, nullptr);
  EXPECT_DOUBLE_EQ(winner->ReportedCost(), done.best_cost_s());
  // `best` answers with the validated figure and says so.
  proto::BestConfigRequest request;
  request.set_job_id(job.job_id());
  proto::BestConfigResponse best = fleet.client().Best(request).value();
  EXPECT_EQ(best.figure(), "validated");
  EXPECT_EQ(best.passes(), 2);
  EXPECT_NEAR(best.gflops(), done.best_gflops(), 1e-6 * done.best_gflops());
}

TEST(FleetTest, AThrottledAgentIsQuarantinedAndTheOtherMeasuresEverything) {
  FleetLauncher::Options o;
  o.agents = 2;
  o.simulate_measure_ms = 20;  // fake agents: their calibration figures are set by flag
  o.simulate_build_ms = 5;
  o.agent_flags[0] = {"--calibration_gflops=30", "--calibration_noise=0.01"};
  o.agent_flags[1] = {"--calibration_gflops=12", "--calibration_noise=0.01"};
  FleetLauncher fleet(o);
  ASSERT_OK(fleet.Start());
  absl::StatusOr<proto::ListDevicesResponse> calibrated = fleet.WaitForDevices(
      [](const proto::ListDevicesResponse& d) {
        int judged = 0;
        for (const auto& w : d.workers()) {
          if (w.role() == proto::AGENT && (w.state() == "free" || w.state() == "quarantined")) {
            ++judged;
          }
        }
        return judged == 2;
      },
      60);
  ASSERT_OK(calibrated.status());
  constexpr int64_t kTrials = 8;
  proto::JobStatus job = fleet.client().Submit(fleet.DenseJob(kTrials)).value();
  proto::JobStatus done = fleet.WaitForJob(job.job_id(), 120).value();
  EXPECT_EQ(done.state(), proto::SUCCEEDED) << done.message();
  std::map<std::string, proto::WorkerStatus> agents;
  const proto::ListDevicesResponse devices = fleet.client().Devices().value();
  for (const auto& w : devices.workers()) {
    if (w.role() == proto::AGENT) agents[w.name()] = w;
  }
  ASSERT_EQ(agents.size(), 2u);
  EXPECT_EQ(agents["agent-0"].state(), "free");
  EXPECT_EQ(agents["agent-0"].calibration().gflops(), 30);
  EXPECT_GE(agents["agent-0"].completed(), kTrials);
  EXPECT_EQ(agents["agent-1"].state(), "quarantined");
  EXPECT_THAT(agents["agent-1"].quarantine(), HasSubstr("slow: calibration 12.00 GFLOPS"));
  EXPECT_EQ(agents["agent-1"].completed(), 0);
  for (const Record& r : Records(fleet, job.job_id())) {
    EXPECT_EQ(r.result.error_no, MeasureErrorNo::kNoError) << r.result.error_msg;
  }
  EXPECT_THAT(fleet.Log("tracker"), HasSubstr("quarantined: slow"));
  // The quarantined agent cannot confirm the winner.
  EXPECT_THAT(done.confirmation(), HasSubstr("not confirmed: every pass ran on agent-0"));
}

TEST(FleetTest, KilledAgentMidMeasurementLosesNothing) {
  FleetLauncher::Options o;
  o.agents = 2;
  FleetLauncher fleet(o);
  ASSERT_OK(fleet.Start());
  constexpr int64_t kTrials = 12;
  proto::JobSpec spec = fleet.DenseJob(kTrials, "64,64,64");
  spec.mutable_measure()->set_min_repeat_ms(150);  // each measurement takes a while
  proto::JobStatus job = fleet.client().Submit(spec).value();
  ASSERT_OK(fleet
                .WaitForDevices(
                    [](const proto::ListDevicesResponse& d) {
                      return AnyBusy(d, proto::AGENT, "agent-0");
                    },
                    60)
                .status());
  fleet.agent(0).Kill(SIGKILL);
  proto::JobStatus done = fleet.WaitForJob(job.job_id(), 240).value();
  EXPECT_EQ(done.state(), proto::SUCCEEDED) << done.message();
  ExpectExactlyOnce(Records(fleet, job.job_id()), kTrials);
  EXPECT_THAT(fleet.Log("tracker"), HasSubstr("requeued for measure"));
}

TEST(FleetTest, KilledTrackerRestartsOnItsStoreAndTheJobCompletes) {
  FleetLauncher::Options o;
  o.agents = 1;
  FleetLauncher fleet(o);
  ASSERT_OK(fleet.Start());
  constexpr int64_t kTrials = 16;
  proto::JobStatus job = fleet.client().Submit(fleet.DenseJob(kTrials)).value();
  // Wait for a few trials, then kill -9 the tracker mid-job.
  for (int i = 0; i < 600; ++i) {
    absl::StatusOr<proto::JobStatus> s = fleet.client().Get(job.job_id());
    if (s.ok() && s->trials_done() >= 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  proto::JobStatus before = fleet.client().Get(job.job_id()).value();
  ASSERT_LT(before.trials_done(), kTrials) << "the job finished before the tracker could be killed";
  fleet.tracker().Kill(SIGKILL);
  fleet.tracker().Wait(10);
  ASSERT_OK(fleet.StartTracker());
  proto::JobStatus done = fleet.WaitForJob(job.job_id(), 240).value();
  EXPECT_EQ(done.state(), proto::SUCCEEDED) << done.message();
  ExpectExactlyOnce(Records(fleet, job.job_id()), kTrials);
  EXPECT_THAT(fleet.Log("tracker"), HasSubstr("resuming job " + job.job_id()));
  // Every worker came back on its own.
  proto::ListDevicesResponse devices = fleet.client().Devices().value();
  EXPECT_EQ(devices.workers_size(), 3);
}

TEST(FleetTest, KilledBuilderMidBuildIsRedoneElsewhere) {
  FleetLauncher::Options o;
  o.builders = 2;
  o.simulate_build_delay_ms = 400;  // builds long enough to be killed in
  FleetLauncher fleet(o);
  ASSERT_OK(fleet.Start());
  constexpr int64_t kTrials = 8;
  proto::JobStatus job = fleet.client().Submit(fleet.DenseJob(kTrials)).value();
  ASSERT_OK(fleet
                .WaitForDevices(
                    [](const proto::ListDevicesResponse& d) {
                      return AnyBusy(d, proto::BUILDER, "builder-0");
                    },
                    60)
                .status());
  fleet.builder(0).Kill(SIGKILL);
  proto::JobStatus done = fleet.WaitForJob(job.job_id(), 240).value();
  EXPECT_EQ(done.state(), proto::SUCCEEDED) << done.message();
  ExpectExactlyOnce(Records(fleet, job.job_id()), kTrials);
  EXPECT_THAT(fleet.Log("tracker"), HasSubstr("requeued for build"));
}

TEST(FleetTest, CrashingAndHangingKernelsAreErrorsAndTheAgentKeepsServing) {
  FleetLauncher::Options o;
  o.enable_test_templates = true;
  FleetLauncher fleet(o);
  ASSERT_OK(fleet.Start());
  proto::JobStatus job = fleet.client().Submit(FaultJob(fleet, /*timeout_s=*/2)).value();
  proto::JobStatus done = fleet.WaitForJob(job.job_id(), 120).value();
  EXPECT_EQ(done.state(), proto::SUCCEEDED) << done.message();
  std::map<std::string, Record> by_fault;
  for (Record& r : Records(fleet, job.job_id())) {
    std::string fault;
    for (const auto& e : r.config["entity"]) {
      if (e[0] == "fault") fault = e[2].is_string() ? e[2].get<std::string>() : e[2].dump();
    }
    by_fault[fault] = r;
  }
  ASSERT_EQ(by_fault.size(), 3u);
  for (const auto& [fault, r] : by_fault) {
    if (absl::StrContains(fault, "segv") || fault == "1") {
      EXPECT_EQ(r.result.error_no, MeasureErrorNo::kRuntimeDevice) << r.result.error_msg;
    } else if (absl::StrContains(fault, "hang") || fault == "2") {
      EXPECT_EQ(r.result.error_no, MeasureErrorNo::kRunTimeout) << r.result.error_msg;
    } else {
      EXPECT_EQ(r.result.error_no, MeasureErrorNo::kNoError) << r.result.error_msg;
    }
  }
  // The same agent process still serves a normal job.
  EXPECT_TRUE(fleet.agent(0).running());
  proto::JobStatus next = fleet.client().Submit(AnyHostDenseJob(fleet, 2)).value();
  proto::JobStatus next_done = fleet.WaitForJob(next.job_id(), 120).value();
  EXPECT_EQ(next_done.state(), proto::SUCCEEDED);
  ExpectExactlyOnce(Records(fleet, next.job_id()), 2);
}

TEST(FleetTest, CancelStopsAHungMeasurementWithinSeconds) {
  FleetLauncher::Options o;
  o.enable_test_templates = true;
  FleetLauncher fleet(o);
  ASSERT_OK(fleet.Start());
  proto::JobStatus job = fleet.client().Submit(FaultJob(fleet, /*timeout_s=*/300)).value();
  // The hang: the agent busy with one measurement for more than 3 s (the
  // others take milliseconds).
  auto busy_since = std::chrono::steady_clock::now();
  bool was_busy = false;
  ASSERT_OK(fleet
                .WaitForDevices(
                    [&](const proto::ListDevicesResponse& d) {
                      const bool busy = AnyBusy(d, proto::AGENT, "agent-0");
                      if (busy && !was_busy) busy_since = std::chrono::steady_clock::now();
                      was_busy = busy;
                      return busy && std::chrono::steady_clock::now() - busy_since >
                                         std::chrono::seconds(3);
                    },
                    120)
                .status());
  ASSERT_EQ(fleet.client().Cancel(job.job_id()).value().state(), proto::CANCELLED);
  // The agent is free again long before the hang's 300 s timeout, and the
  // host builds and measures the next job.
  ASSERT_OK(fleet
                .WaitForDevices(
                    [](const proto::ListDevicesResponse& d) {
                      return !AnyBusy(d, proto::AGENT, "agent-0");
                    },
                    30)
                .status());
  EXPECT_THAT(fleet.Log("agent-0"), HasSubstr("aborted by the tracker"));
  EXPECT_TRUE(fleet.agent(0).running());
  proto::JobStatus next = fleet.client().Submit(AnyHostDenseJob(fleet, 2)).value();
  proto::JobStatus next_done = fleet.WaitForJob(next.job_id(), 60).value();
  EXPECT_EQ(next_done.state(), proto::SUCCEEDED) << next_done.message();
}

TEST(FleetTest, BadInputGetsClearErrorsAndDisturbsNothing) {
  FleetLauncher fleet(FleetLauncher::Options{});
  ASSERT_OK(fleet.Start());
  proto::JobSpec spec = fleet.DenseJob(4);
  spec.mutable_task()->set_workload_name("conv9d");
  absl::StatusOr<proto::JobStatus> bad = fleet.client().Submit(spec);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("conv9d"));
  spec = fleet.DenseJob(4);
  spec.mutable_task()->set_target("llvm -mtriple=mips-linux");
  EXPECT_THAT(fleet.client().Submit(spec).status().message(), HasSubstr("mips"));
  // A key no device has: queued, its trials waiting (not built: "native"
  // is the agents' CPU, and none has said which), and its status says why.
  spec = fleet.DenseJob(2);
  spec.set_device_key("rk3399");
  proto::JobStatus pending = fleet.client().Submit(spec).value();
  bool seen_pending = false;
  for (int i = 0; i < 200 && !seen_pending; ++i) {
    proto::QueueSummaryResponse q = fleet.client().Queue().value();
    for (const auto& j : q.jobs())
      seen_pending |= j.job_id() == pending.job_id() && j.to_build() > 0 && j.building() == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(seen_pending);
  EXPECT_THAT(fleet.client().Get(pending.job_id())->message(),
              HasSubstr("no agent of key 'rk3399'"));
  // No token, or a wrong one: refused.
  FleetAddress anonymous;
  anonymous.address = fleet.address();
  FleetClient stranger(anonymous);
  EXPECT_EQ(stranger.Submit(fleet.DenseJob(1)).status().code(), absl::StatusCode::kUnauthenticated);
  anonymous.token = "0123456789abcdef0123456789abcdef";
  FleetClient liar(anonymous);
  EXPECT_EQ(liar.List(true).status().code(), absl::StatusCode::kUnauthenticated);
  // Unknown job ids.
  EXPECT_EQ(fleet.client().Get("job-999").status().code(), absl::StatusCode::kNotFound);
  // Meanwhile a normal job is unaffected.
  proto::JobStatus ok = fleet.client().Submit(fleet.DenseJob(3)).value();
  EXPECT_EQ(fleet.WaitForJob(ok.job_id(), 120)->state(), proto::SUCCEEDED);
  EXPECT_EQ(fleet.client().Get(pending.job_id())->state(), proto::RUNNING);
  EXPECT_EQ(fleet.client().Cancel(pending.job_id())->state(), proto::CANCELLED);
}

}  // namespace
}  // namespace tunefleet

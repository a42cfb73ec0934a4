// Local mode end to end: real builds, the real runner child, records on disk.
#include "local/tune_command.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_split.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "local/local_mode_test_util.h"
#include "proto_convert/task_spec.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/records/record.h"
#include "tuner_core/records/record_file.h"

namespace tunefleet {
namespace {

// A one-kernel job as `tune --workload dense --shape ...` makes it.
proto::JobSpec DenseJob(const std::string& shape, int64_t trials,
                        const std::string& target = HostTargetString()) {
  proto::JobSpec spec;
  *spec.mutable_task() =
      MakeTaskSpec("", "dense", WorkloadArgsFromShape("dense", shape, "NK").value(), target);
  spec.set_n_trial(trials);
  MakeQuick(spec, 7);
  return spec;
}

class TuneCommandTest : public LocalModeTest {
 protected:
  proto::JobSpec SmallJob(int64_t trials) {
    return DenseJob("37,45,29", trials);
  }  // divides no tile

  LocalRunOptions Run() const {
    LocalRunOptions run;
    run.log = log_;
    run.host.runner.num_threads = 2;
    return run;
  }

  std::string ReadLog() {
    std::ifstream in(log_, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

TEST_F(TuneCommandTest, RecordsAreStampedByTheMeasurersClock) {
  FakeClock clock;  // wall time 1'700'000'000 s, moving only when told
  proto::JobSpec o = SmallJob(4);
  o.set_validate_top_k(0);
  LocalRunOptions run = Run();
  run.host.clock = &clock;
  std::ostringstream progress, out;
  ASSERT_TRUE(RunTune(o, run, progress, out).ok());
  auto report = ReadRecords(log_);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->records.size(), 4u);
  for (const Record& r : report->records) {
    EXPECT_DOUBLE_EQ(r.result.timestamp, FakeClock::kDefaultWallStartNanos / 1e9);
  }
}

TEST_F(TuneCommandTest, TunesRecordsEveryTrialAndReportsTheBest) {
  std::ostringstream progress, out;
  auto summary = RunTune(SmallJob(24), Run(), progress, out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->trials, 24);
  ASSERT_EQ(summary->tasks.size(), 1u);
  EXPECT_GT(summary->tasks[0].best_gflops(), 0.0);
  EXPECT_FALSE(summary->tasks[0].best_config.is_null());
  EXPECT_NE(progress.str().find("[local]"), std::string::npos);
  EXPECT_NE(progress.str().find("Progress: (24/24)"), std::string::npos) << progress.str();
  EXPECT_NE(out.str().find("Best: "), std::string::npos) << out.str();

  auto report = ReadRecords(log_);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->records.size(), 24u);
  // Configs this host cannot build (a vector width it lacks, a tile its
  // registers cannot hold) were skipped before measuring, never logged: every
  // logged trial ran.
  for (const Record& r : report->records) {
    EXPECT_EQ(r.task_name, "dense_gemm.x86");
    EXPECT_TRUE(r.result.ok()) << MeasureErrorName(r.result.error_no) << ": " << r.result.error_msg;
  }

  std::ostringstream best;
  ASSERT_TRUE(RunBest(log_, best).ok());
  EXPECT_NE(best.str().find("GFLOPS"), std::string::npos) << best.str();
}

// On AVX2 (the host's CPU without AVX-512) the 16-lane configs are skipped
// before measuring and counted; the given tuner measures what it is given.
TEST_F(TuneCommandTest, ConfigsTheTargetCannotBuildAreSkippedBeforeMeasuring) {
  proto::JobSpec o = DenseJob("37,45,29", 16, HostTargetString() + " -mattr=-avx512f");
  o.set_validate_top_k(0);
  std::ostringstream progress, out;
  auto summary = RunTune(o, Run(), progress, out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->trials, 16);
  EXPECT_GT(summary->tasks[0].refused_before_measuring, 0);
  EXPECT_NE(out.str().find("skipped before measuring"), std::string::npos) << out.str();
  auto report = ReadRecords(log_);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->records.size(), 16u);
  for (const Record& r : report->records) {
    EXPECT_TRUE(r.result.ok()) << r.result.error_msg;
    EXPECT_EQ(r.config.dump().find("[\"vec\",\"ot\",16]"), std::string::npos) << r.config.dump();
  }
}

// The log's trials of the task count as done: the same job run again
// measures nothing, a larger budget goes on from there, never measuring a
// config twice.
TEST_F(TuneCommandTest, ResumeSkipsConfigsAlreadyInTheLog) {
  std::ostringstream progress, out;
  ASSERT_TRUE(RunTune(SmallJob(10), Run(), progress, out).ok());
  auto again = RunTune(SmallJob(10), Run(), progress, out);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->trials, 0);
  EXPECT_EQ(again->tasks[0].resumed, 10);
  auto second = RunTune(SmallJob(20), Run(), progress, out);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->tasks[0].resumed, 10);
  EXPECT_EQ(second->trials, 10);
  auto report = ReadRecords(log_);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->records.size(), 20u);
  std::set<int64_t> indices;
  for (const Record& r : report->records) indices.insert(r.config["index"].get<int64_t>());
  EXPECT_EQ(indices.size(), 20u) << "a config was measured twice";
}

TEST_F(TuneCommandTest, XgbLearnsFromResumedRecordsAndFromOtherShapes) {
  std::ostringstream progress, out;
  ASSERT_TRUE(RunTune(SmallJob(10), Run(), progress, out).ok());  // random, into log_
  proto::JobSpec resume = SmallJob(18);
  resume.set_tuner("xgb");
  resume.set_plan_size(8);
  auto resumed = RunTune(resume, Run(), progress, out);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->tasks[0].resumed, 10);
  EXPECT_EQ(resumed->trials, 8);
  EXPECT_GT(resumed->tasks[0].model.total_seconds(), 0.0);  // the resumed results were fitted
  EXPECT_NE(out.str().find("Model: "), std::string::npos) << out.str();

  proto::JobSpec other = DenseJob("40,45,29", 4);
  other.set_tuner("xgb");
  LocalRunOptions other_run = Run();
  other_run.log = log_ + ".other";
  other_run.transfer_log = log_;
  std::ostringstream transfer_out;
  auto transferred = RunTune(other, other_run, progress, transfer_out);
  ASSERT_TRUE(transferred.ok()) << transferred.status();
  EXPECT_NE(transfer_out.str().find("Transfer: 18 records of 1 other shapes"), std::string::npos)
      << transfer_out.str();
  EXPECT_NE(transfer_out.str().find("History {\""), std::string::npos)
      << transfer_out.str();  // its weight
  other_run.transfer_log = log_ + ".missing";
  EXPECT_EQ(RunTune(other, other_run, progress, transfer_out).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(TuneCommandTest, BadInputsAreClearErrors) {
  std::ostringstream progress, out;
  proto::JobSpec o = SmallJob(1);
  o.set_tuner("annealing-magic");
  EXPECT_EQ(RunTune(o, Run(), progress, out).status().code(), absl::StatusCode::kInvalidArgument);
  o = DenseJob("37,45,29", 1, "llvm -mcpu=pentium9");
  EXPECT_NE(RunTune(o, Run(), progress, out).status().message().find("unknown CPU"),
            std::string::npos);
  o = SmallJob(1);
  *o.mutable_task() = MakeTaskSpec(
      "", "conv2d_nchw", {{"N", 1}, {"C", 4}, {"H", 5}, {"W", 5}, {"K", 4}, {"R", 9}, {"S", 3}},
      HostTargetString());
  EXPECT_NE(RunTune(o, Run(), progress, out).status().message().find("no output rows"),
            std::string::npos);
  o = SmallJob(1);
  o.mutable_measure()->set_number(0);
  EXPECT_NE(RunTune(o, Run(), progress, out).status().message().find("number"), std::string::npos);
  std::ostringstream best;
  EXPECT_EQ(RunBest(log_ + ".missing", best).code(), absl::StatusCode::kNotFound);
}

// Distinct configs that succeeded, per the records of `log`.
int SuccessfulConfigs(const std::vector<Record>& records) {
  std::set<int64_t> indices;
  for (const Record& r : records) {
    if (r.result.ok()) indices.insert(r.config["index"].get<int64_t>());
  }
  return static_cast<int>(indices.size());
}

TEST_F(TuneCommandTest, ValidatesTheTopConfigsResumedOnesIncludedAndRecordsTheValidations) {
  std::ostringstream progress, out;
  proto::JobSpec first = DenseJob("64,64,64", 10);
  first.set_validate_top_k(0);
  ASSERT_TRUE(RunTune(first, Run(), progress, out).ok());
  const std::string before = ReadLog();
  const std::vector<std::string> before_lines = absl::StrSplit(before, '\n');

  proto::JobSpec second = first;
  second.set_n_trial(14);  // 4 more
  second.set_validate_top_k(3);
  second.set_validation_passes(2);
  std::ostringstream second_out;
  auto summary = RunTune(second, Run(), progress, second_out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->tasks[0].resumed, 10);

  auto report = ReadRecords(log_);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->records.size(), 14u);
  const int k = std::min(3, SuccessfulConfigs(report->records));
  ASSERT_GT(k, 0) << "no config of 64x64x64 ran";
  EXPECT_EQ(summary->tasks[0].validated_configs, k);
  EXPECT_EQ(summary->validated_lines, k);

  // Exactly k lines carry a validation; every other line of the first run
  // kept its bytes, and a validated line kept its search figure.
  const std::vector<std::string> after_lines = absl::StrSplit(ReadLog(), '\n');
  ASSERT_EQ(after_lines.size(), before_lines.size() + 4);
  int validated = 0;
  double best_validated_cost = 0;
  for (size_t i = 0; i + 1 < after_lines.size(); ++i) {
    auto record = Record::FromLine(after_lines[i]);
    ASSERT_TRUE(record.ok()) << record.status();
    if (record->validation.has_value()) {
      ++validated;
      EXPECT_TRUE(record->result.ok());
      EXPECT_EQ(record->validation->pass_costs.size() + record->validation->failed_passes, 2u);
      if (record->validated() &&
          (best_validated_cost == 0 || record->validation->cost_s() < best_validated_cost)) {
        best_validated_cost = record->validation->cost_s();
      }
      if (i + 1 < before_lines.size()) {
        auto original = Record::FromLine(before_lines[i]);
        ASSERT_TRUE(original.ok());
        EXPECT_EQ(record->result.costs, original->result.costs);
      }
    } else if (i + 1 < before_lines.size()) {
      EXPECT_EQ(after_lines[i], before_lines[i]) << "line " << i + 1;
    }
  }
  EXPECT_EQ(validated, k);

  // The reported best is the validated best, and the summary says so.
  const LocalTaskOutcome& task = summary->tasks[0];
  ASSERT_TRUE(task.validated) << second_out.str();
  EXPECT_DOUBLE_EQ(task.best_cost_s, best_validated_cost);
  EXPECT_EQ(task.validation_passes, 2);
  EXPECT_GT(task.search_best_gflops(), 0);
  EXPECT_NE(second_out.str().find("GFLOPS validated (median of 2 passes, spread "),
            std::string::npos)
      << second_out.str();
  EXPECT_NE(second_out.str().find("; search figure "), std::string::npos) << second_out.str();

  std::ostringstream best;
  ASSERT_TRUE(RunBest(log_, best).ok());
  EXPECT_NE(best.str().find("validated (median of 2 passes, spread "), std::string::npos)
      << best.str();
  EXPECT_NE(best.str().find("; search figure "), std::string::npos) << best.str();
}

TEST_F(TuneCommandTest, ValidationOffLeavesTheLogAsAppendedAndSaysSo) {
  std::ostringstream progress, out;
  proto::JobSpec o = DenseJob("64,64,64", 6);
  o.set_validate_top_k(0);
  auto first = RunTune(o, Run(), progress, out);
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string before = ReadLog();
  o.set_n_trial(12);
  std::ostringstream second_out;
  auto second = RunTune(o, Run(), progress, second_out);
  ASSERT_TRUE(second.ok()) << second.status();
  const std::string after = ReadLog();
  EXPECT_EQ(after.substr(0, before.size()), before);
  EXPECT_EQ(after.find("\"validation\""), std::string::npos);
  EXPECT_EQ(second->tasks[0].validated_configs, 0);
  EXPECT_FALSE(second->tasks[0].validated);
  if (second->tasks[0].best_gflops() > 0) {
    EXPECT_NE(second_out.str().find("GFLOPS search figure, not validated"), std::string::npos)
        << second_out.str();
    std::ostringstream best;
    ASSERT_TRUE(RunBest(log_, best).ok());
    EXPECT_NE(best.str().find("search figure, not validated"), std::string::npos) << best.str();
  }
}

TEST_F(TuneCommandTest, BadValidationFlagsAreRefusedNamingTheFlag) {
  std::ostringstream progress, out;
  for (int top_k : {-1, kMaxValidateTopK + 1}) {
    proto::JobSpec o = SmallJob(2);
    o.set_validate_top_k(top_k);
    absl::Status s = RunTune(o, Run(), progress, out).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("--validate_top_k"), std::string::npos) << s;
  }
  for (int passes : {0, kMaxValidationPasses + 1}) {
    proto::JobSpec o = SmallJob(2);
    o.set_validation_passes(passes);
    absl::Status s = RunTune(o, Run(), progress, out).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("--validation_passes"), std::string::npos) << s;
  }
  EXPECT_EQ(ReadRecords(log_).status().code(), absl::StatusCode::kNotFound)
      << "a refused job measured something";
}

TEST(FirstConfigsTest, PretunedConfigsComeFirstThenTheDefaultOnce) {
  std::unique_ptr<Task> task =
      Task::Make("", "dense", {{"M", 64}, {"N", 64}, {"K", 64}, {"layout", "NK"}}, "llvm").value();
  const TargetSpec target = ParseTarget("llvm").value();
  // Cold: the default config alone.
  const std::vector<Config> cold = FirstConfigs(*task, target, PretunedRecords());
  ASSERT_EQ(cold.size(), 1u);
  const int64_t fallback = cold[0].index();
  // Records of two configs, the default among them: they come first, the
  // default is not proposed twice.
  const int64_t other = fallback == 0 ? 1 : 0;
  std::string text;
  for (int64_t index : {other, fallback}) {
    Record r;
    r.target = "llvm";
    r.task_name = task->name();
    r.workload_name = "dense";
    r.workload_args = task->workload().args();
    r.config = task->space().Get(index).value().ToJson();
    r.result.costs = {index == other ? 1e-3 : 2e-3};
    text += r.ToLine() + "\n";
  }
  const std::vector<Config> warm =
      FirstConfigs(*task, target, PretunedRecords::Parse(text, "test").value());
  ASSERT_EQ(warm.size(), 2u);
  EXPECT_EQ(warm[0].index(), other);
  EXPECT_EQ(warm[1].index(), fallback);
}

TEST(LoadPretunedRecordsTest, ShippedNoneOrAFile) {
  const std::string avx512 =
      ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=znver4").value().family();
  EXPECT_GT(LoadPretunedRecords(avx512, "").value()->num_records(), 0);
  // Parsed once: a second lookup is the same records.
  EXPECT_EQ(LoadPretunedRecords(avx512, "").value(), LoadPretunedRecords(avx512, "").value());
  EXPECT_EQ(LoadPretunedRecords("", "").value()->num_records(), 0);  // a cold start
  const std::string arm =
      ParseTarget("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72").value().family();
  EXPECT_EQ(LoadPretunedRecords(arm, "").value()->num_records(), 0);  // none shipped
  absl::StatusOr<std::shared_ptr<const PretunedRecords>> missing =
      LoadPretunedRecords(avx512, "/nonexistent.jsonl");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent.jsonl"), std::string::npos);
}

// A conv2d given as --args JSON tunes like dense, in both timing layouts.
TEST_F(TuneCommandTest, TunesAConvFromArgs) {
  for (const char* layout : {"NCHW", "NCHWc"}) {
    std::ostringstream progress, out;
    proto::JobSpec o = SmallJob(8);
    *o.mutable_task() = MakeTaskSpec("", "conv2d_nchw",
                                     {{"N", 1},
                                      {"C", 8},
                                      {"H", 9},
                                      {"W", 11},
                                      {"K", 16},
                                      {"R", 3},
                                      {"S", 3},
                                      {"padding", 1},
                                      {"layout", layout}},
                                     HostTargetString());
    LocalRunOptions run = Run();
    run.log.clear();
    auto summary = RunTune(o, run, progress, out);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->tasks[0].template_name, "conv2d_nchwc.x86");
    EXPECT_EQ(summary->trials, 8);
    EXPECT_GT(summary->tasks[0].best_gflops(), 0) << out.str();
  }
}

}  // namespace
}  // namespace tunefleet

// Local mode's job driver: real builds, the real runner child, the fleet's
// JobRunner deciding which task runs next, records on disk.
#include "local/local_job.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "local/build_ahead.h"
#include "local/local_mode_test_util.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/pretuned/pretuned_records.h"
#include "tuner_core/records/record_file.h"
#include "tuner_core/templates/register_fit.h"

namespace tunefleet {
namespace {

class LocalJobTest : public LocalModeTest {
 protected:
  void SetUp() override {
    LocalModeTest::SetUp();
    options_.runner.num_threads = 1;
  }

  // Dense tasks with these M (N = K = 32), weights 1.
  static proto::JobSpec Spec(const std::vector<int>& ms, int64_t per_task) {
    proto::JobSpec spec;
    for (int m : ms) {
      proto::JobTask* t = spec.add_tasks();
      t->mutable_task()->set_workload_name("dense");
      t->mutable_task()->set_workload_args_json("{\"M\":" + std::to_string(m) +
                                                ",\"N\":32,\"K\":32,\"layout\":\"NK\"}");
      t->mutable_task()->set_target("llvm");
      t->set_weight(1);
    }
    spec.set_n_trial(per_task * static_cast<int64_t>(ms.size()));
    spec.set_trials_per_task(per_task);
    MakeQuick(spec, 3);
    return spec;
  }

  LocalMeasurerOptions options_;
};

TEST_F(LocalJobTest, SequentialJobMeasuresEveryTaskAndRecordsIt) {
  proto::JobSpec spec = Spec({16, 24}, 4);
  spec.set_task_policy("sequential");
  std::ostringstream progress;
  LocalJobSummary summary = RunLocalJob(spec, options_, log_, progress).value();
  EXPECT_EQ(summary.trials, 8);
  EXPECT_EQ(summary.tasks[0].trials, 4);
  EXPECT_EQ(summary.tasks[1].trials, 4);
  // Random configs may all fail on a small shape (e.g. 16-lane vectors on
  // AVX2); the estimate sums the tasks that have a best.
  EXPECT_NEAR(summary.estimated_latency_s,
              summary.tasks[0].best_cost_s + summary.tasks[1].best_cost_s, 1e-15);
  ReadReport records = ReadRecords(log_).value();
  ASSERT_EQ(records.records.size(), 8u);
  std::map<int, int> per_m;
  for (const Record& r : records.records) ++per_m[r.workload_args.value("M", -1)];
  EXPECT_EQ(per_m[16], 4);
  EXPECT_EQ(per_m[24], 4);
}

// With a CPU free beside the measurement's one thread, each batch is built
// while the one before it is measured; without (build_ahead off), each is
// built, then measured. Either way every trial of the budget is measured
// once, logged, and answered to the runner.
TEST_F(LocalJobTest, BuildingAheadMeasuresTheSameTrialsAsBuildingThenMeasuring) {
  for (const bool ahead : {false, true}) {
    SCOPED_TRACE(ahead ? "build-ahead" : "build, then measure");
    std::remove(log_.c_str());
    options_.build_ahead = ahead;
    proto::JobSpec spec = Spec({16, 24, 8}, 10);
    spec.set_task_policy("round_robin");
    spec.set_window(4);
    std::ostringstream progress;
    LocalJobSummary summary = RunLocalJob(spec, options_, log_, progress).value();
    EXPECT_EQ(summary.trials, 30);
    for (const LocalTaskOutcome& task : summary.tasks) EXPECT_EQ(task.trials, 10);
    EXPECT_EQ(summary.timings.trials, 30);
    ReadReport records = ReadRecords(log_).value();
    ASSERT_EQ(records.records.size(), 30u);
    std::set<std::pair<int, int64_t>> configs;  // (M, config): each measured once
    for (const Record& r : records.records) {
      configs.emplace(r.workload_args.value("M", -1), r.config.value("index", int64_t{-1}));
    }
    EXPECT_EQ(configs.size(), 30u);
    if (ahead && !FreeCpus(options_.runner.num_threads).empty()) {
      EXPECT_GT(summary.timings.build_ahead_seconds, 0) << "no build ran beside a measurement";
    } else {
      EXPECT_EQ(summary.timings.build_ahead_seconds, 0);
    }
  }
}

TEST_F(LocalJobTest, AWarmStartMeasuresThePretunedConfigsFirst) {
  proto::JobSpec spec = Spec({16, 24}, 4);
  spec.set_task_policy("sequential");
  // Records for M = 16 only: two configs the target can build, the faster
  // one second in the file.
  std::unique_ptr<Task> task =
      Task::Make("", "dense", {{"M", 16}, {"N", 32}, {"K", 32}, {"layout", "NK"}}, "llvm").value();
  const auto check = RegisterTileCheck(*task, ParseTarget("llvm").value());
  std::vector<int64_t> chosen;
  for (int64_t i = task->space().size() - 1; i >= 0 && chosen.size() < 2; --i) {
    if (check == nullptr || check(task->space().Get(i).value()).ok()) chosen.push_back(i);
  }
  ASSERT_EQ(chosen.size(), 2u);
  std::string text;
  for (size_t k = 0; k < chosen.size(); ++k) {
    Record r;
    r.target = "llvm";
    r.task_name = task->name();
    r.workload_name = "dense";
    r.workload_args = task->workload().args();
    r.config = task->space().Get(chosen[k]).value().ToJson();
    r.result.costs = {k == 0 ? 2e-3 : 1e-3};
    text += r.ToLine() + "\n";
  }
  const PretunedRecords pretuned = PretunedRecords::Parse(text, "test").value();
  std::ostringstream progress;
  LocalJobSummary summary =
      RunLocalJob(spec, options_, log_, progress, {.pretuned = &pretuned}).value();
  EXPECT_EQ(summary.trials, 8);
  ReadReport records = ReadRecords(log_).value();
  std::map<int, std::vector<int64_t>> measured;  // per M, in order
  for (const Record& r : records.records) {
    measured[r.workload_args.value("M", -1)].push_back(r.config["index"].get<int64_t>());
  }
  ASSERT_EQ(measured[16].size(), 4u);
  EXPECT_EQ(measured[16][0], chosen[1]);  // fastest first
  EXPECT_EQ(measured[16][1], chosen[0]);
  // M = 24 has no records: the nearest workload's, carried to its space.
  ASSERT_EQ(measured[24].size(), 4u);
  std::unique_ptr<Task> other =
      Task::Make("", "dense", {{"M", 24}, {"N", 32}, {"K", 32}, {"layout", "NK"}}, "llvm").value();
  const std::vector<Config> carried = pretuned.ConfigsFor(*other, 3);
  ASSERT_FALSE(carried.empty());
  EXPECT_EQ(measured[24][0], carried[0].index());
}

TEST_F(LocalJobTest, EarlyRejectionTimesSlowCandidatesOnce) {
  // At 1x the task's best, every candidate whose first repeat is slower than
  // the best so far is timed once; the best ones get every repeat.
  proto::JobSpec spec = Spec({64}, 24);
  spec.set_window(4);
  spec.mutable_measure()->set_repeat(3);
  spec.set_validate_top_k(0);
  options_.reject_slower_than = 1;
  std::ostringstream progress;
  LocalJobSummary summary = RunLocalJob(spec, options_, log_, progress).value();
  EXPECT_EQ(summary.trials, 24);
  ReadReport records = ReadRecords(log_).value();
  int once = 0;
  int full = 0;
  for (const Record& r : records.records) {
    if (!r.result.ok()) continue;
    if (r.result.timed_repeats == 1) ++once;
    if (r.result.timed_repeats == 3) ++full;
  }
  // The first batch has no best to race against; later ones mostly lose.
  EXPECT_GT(once, 0);
  EXPECT_GT(full, 0);
  // A bound under the best would refuse everything: refused by name.
  options_.reject_slower_than = 0.5;
  absl::StatusOr<LocalJobSummary> bad = RunLocalJob(spec, options_, "", progress);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("--reject_slower_than"));
}

TEST_F(LocalJobTest, SelectiveJobTunesTheRepresentativeOnly) {
  proto::JobSpec spec = Spec({16, 16}, 5);
  spec.set_selective("top2");
  std::ostringstream progress;
  LocalJobSummary summary = RunLocalJob(spec, options_, "", progress).value();
  // One representative with its 5, the other task its top 2.
  EXPECT_EQ(summary.trials, 7);
  EXPECT_THAT((std::vector<int64_t>{summary.tasks[0].trials, summary.tasks[1].trials}),
              ::testing::UnorderedElementsAre(5, 2));
}

TEST_F(LocalJobTest, ValidatesEachTasksWinnersAndEstimatesWithValidatedCosts) {
  proto::JobSpec spec = Spec({64, 48}, 6);
  spec.mutable_tasks(1)->set_weight(3);
  spec.set_task_policy("sequential");
  std::ostringstream progress;
  LocalJobSummary summary = RunLocalJob(spec, options_, log_, progress).value();
  ReadReport records = ReadRecords(log_).value();
  ASSERT_EQ(records.records.size(), 12u);
  // Per task (M): distinct successful configs, and the validated lines.
  std::map<int, std::set<int64_t>> successes;
  std::map<int, std::vector<const Record*>> validated;
  for (const Record& r : records.records) {
    const int m = r.workload_args.value("M", -1);
    if (r.result.ok()) successes[m].insert(r.config["index"].get<int64_t>());
    if (r.validation.has_value()) validated[m].push_back(&r);
  }
  int expected_lines = 0;
  double expected_latency = 0;
  for (int t = 0; t < 2; ++t) {
    const int m = t == 0 ? 64 : 48;
    const int k = std::min<int>(2, successes[m].size());
    expected_lines += k;
    EXPECT_EQ(validated[m].size(), static_cast<size_t>(k)) << "M=" << m;
    if (summary.tasks[t].validated) {
      // The task's best is its cheapest validated cost, from the log's lines.
      double cheapest = 0;
      for (const Record* r : validated[m]) {
        if (r->validated() && (cheapest == 0 || r->validation->cost_s() < cheapest))
          cheapest = r->validation->cost_s();
      }
      EXPECT_DOUBLE_EQ(summary.tasks[t].best_cost_s, cheapest);
      EXPECT_EQ(summary.tasks[t].validation_passes, 2);
    } else {
      EXPECT_EQ(summary.tasks[t].best_cost_s, summary.tasks[t].search_best_cost_s);
    }
    expected_latency += (t == 0 ? 1 : 3) * summary.tasks[t].best_cost_s;
  }
  EXPECT_EQ(summary.validated_lines, expected_lines);
  EXPECT_GT(expected_lines, 0) << "no config of either task ran";
  EXPECT_NEAR(summary.estimated_latency_s, expected_latency, 1e-15);
}

TEST_F(LocalJobTest, BadValidationOrMeasureOptionsAreRefusedNamingThem) {
  std::ostringstream progress;
  proto::JobSpec spec = Spec({16}, 2);
  spec.set_validate_top_k(-1);
  EXPECT_THAT(RunLocalJob(spec, options_, "", progress).status().message(),
              ::testing::HasSubstr("--validate_top_k"));
  spec.set_validate_top_k(1);
  spec.set_validation_passes(0);
  EXPECT_THAT(RunLocalJob(spec, options_, "", progress).status().message(),
              ::testing::HasSubstr("--validation_passes"));
  // The spec's measure options are checked before anything is built.
  spec = Spec({16}, 2);
  spec.mutable_measure()->set_timeout_s(900);
  EXPECT_THAT(RunLocalJob(spec, options_, "", progress).status().message(),
              ::testing::HasSubstr("timeout_s"));
}

TEST_F(LocalJobTest, BadSpecIsAnError) {
  proto::JobSpec spec = Spec({16}, 2);
  spec.set_task_policy("lottery");
  std::ostringstream progress;
  EXPECT_THAT(RunLocalJob(spec, options_, "", progress).status().message(),
              ::testing::HasSubstr("unknown task scheduler 'lottery'"));
}

}  // namespace
}  // namespace tunefleet

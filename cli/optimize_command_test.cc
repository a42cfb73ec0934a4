// `tunefleet optimize` end to end on a tiny seeded CNN: tuning stops on its
// time budget (the job's finish reason says so), the records compile into a
// library, and the compiled model is timed; ONNX Runtime is timed beside it
// or the summary says why not. No wall-clock figure is asserted.
#include "cli/optimize_command.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "local/local_mode_test_util.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/records/record_file.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

constexpr char kTinyNet[] = "compiler/testdata/tiny_net.onnx";

OptimizeOptions TinyOptions(const std::string& dir) {
  OptimizeOptions o;
  o.model = kTinyNet;
  o.output_dir = dir;
  o.job = ModelJobSpec(kTinyNet, {}, HostTargetString(),
                       {.trials_per_task = 0, .task_policy = "gradient", .time_budget_s = 3})
              .value();
  o.job.set_tuner("random");
  o.job.set_seed(5);
  o.job.set_window(2);
  o.job.mutable_measure()->set_number(1);
  o.job.mutable_measure()->set_repeat(1);
  o.job.mutable_measure()->set_cooldown_interval_s(0);
  o.job.set_validate_top_k(1);
  o.job.set_validation_passes(1);
  o.run.host.runner.num_threads = 1;
  o.runs = 3;
  return o;
}

TEST(OptimizeCommandTest, TunesWithinTheBudgetCompilesAndTimes) {
  ASSERT_TRUE(UseTestRunner());
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/optimized";
  std::ostringstream progress, out;
  absl::StatusOr<OptimizeSummary> summary = RunOptimize(TinyOptions(dir), progress, out);
  ASSERT_TRUE(summary.ok()) << summary.status() << "\n" << out.str();
  EXPECT_GT(summary->tuning.trials, 0);
  EXPECT_THAT(out.str(), HasSubstr("time budget 3 s"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/model.so"));
  auto records = ReadRecords(dir + "/records.jsonl");
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(static_cast<int64_t>(records->records.size()), summary->tuning.trials);
  EXPECT_GT(summary->tuned_ms, 0);
  EXPECT_THAT(out.str(), HasSubstr("compiled model: "));
  if (summary->ort_ms.has_value()) {
    EXPECT_GT(*summary->ort_ms, 0);
    EXPECT_THAT(out.str(), HasSubstr("ONNX Runtime:   "));
  } else {
    EXPECT_FALSE(summary->ort_note.empty());
    EXPECT_THAT(out.str(), HasSubstr("ONNX Runtime:   not measured: "));
  }
}

TEST(OptimizeCommandTest, RefusesWithoutABudgetOrAnOutputDirectory) {
  OptimizeOptions o = TinyOptions("");
  std::ostringstream progress, out;
  absl::StatusOr<OptimizeSummary> no_dir = RunOptimize(o, progress, out);
  EXPECT_EQ(no_dir.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_dir.status().message(), HasSubstr("-o DIR"));
  o.output_dir = std::string(std::getenv("TEST_TMPDIR")) + "/unused";
  o.job.clear_time_budget_s();
  absl::StatusOr<OptimizeSummary> no_budget = RunOptimize(o, progress, out);
  EXPECT_EQ(no_budget.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_budget.status().message(), HasSubstr("--time_budget"));
}

}  // namespace
}  // namespace tunefleet

#include "device_agent/measure_conversions.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;

TEST(MeasureConversionsTest, RequestCarriesWorkloadArtifactAndOptions) {
  auto workload = MakeWorkload("dense", {{"M", 8}, {"N", 16}, {"K", 32}});
  ASSERT_TRUE(workload.ok()) << workload.status();
  MeasureOptions options;
  options.number = 7;
  options.repeat = 5;
  options.min_repeat_ms = 150;
  options.cooldown_interval_s = 0.25;
  options.enable_cpu_cache_flush = true;
  options.timeout_s = 4;
  options.check_correctness = false;
  options.input_seed = 99;
  proto::RunRequest request = MakeRunRequest(**workload, "ELF...", "entry", "hash", options);
  EXPECT_EQ(request.workload_name(), "dense");
  EXPECT_EQ(nlohmann::json::parse(request.workload_args_json()), (*workload)->args());
  EXPECT_EQ(request.shared_object(), "ELF...");
  EXPECT_EQ(request.entry_name(), "entry");
  EXPECT_EQ(request.artifact_hash(), "hash");
  EXPECT_EQ(request.options().number(), 7);
  EXPECT_EQ(request.options().repeat(), 5);
  EXPECT_EQ(request.options().min_repeat_ms(), 150);
  EXPECT_EQ(request.options().cooldown_interval_s(), 0.25);
  EXPECT_TRUE(request.options().enable_cpu_cache_flush());
  EXPECT_EQ(request.options().timeout_s(), 4);
  EXPECT_FALSE(request.options().check_correctness());
  EXPECT_EQ(request.options().input_seed(), 99u);
}

TEST(MeasureConversionsTest, SuccessKeepsCostsAndSumsStageTimes) {
  proto::RunResult run;
  run.add_costs(1e-3);
  run.add_costs(2e-3);
  run.set_load_seconds(0.5);
  run.set_check_seconds(0.25);
  run.set_run_seconds(1.0);
  run.set_prepare_seconds(2.0);
  MeasureResult result = ToMeasureResult(run, 1234.5);
  EXPECT_TRUE(result.ok());
  EXPECT_THAT(result.costs, ElementsAre(1e-3, 2e-3));
  EXPECT_DOUBLE_EQ(result.all_cost, 3.75);
  EXPECT_EQ(result.timestamp, 1234.5);
}

TEST(MeasureConversionsTest, FailureRecordsTheAutoTvmPlaceholderCost) {
  proto::RunResult run;
  run.set_error_no(static_cast<int>(MeasureErrorNo::kWrongAnswer));
  run.set_error_msg("index 3");
  MeasureResult result = ToMeasureResult(run, 0);
  EXPECT_EQ(result.error_no, MeasureErrorNo::kWrongAnswer);
  EXPECT_EQ(result.error_msg, "index 3");
  EXPECT_THAT(result.costs, ElementsAre(1e9));
}

TEST(MeasureConversionsTest, NonsenseFromTheWireBecomesUnknown) {
  proto::RunResult out_of_range;
  out_of_range.set_error_no(42);
  EXPECT_EQ(ToMeasureResult(out_of_range, 0).error_no, MeasureErrorNo::kUnknown);
  proto::RunResult success_without_costs;
  MeasureResult result = ToMeasureResult(success_without_costs, 0);
  EXPECT_EQ(result.error_no, MeasureErrorNo::kUnknown);
  EXPECT_THAT(result.costs, ElementsAre(1e9));
}

}  // namespace
}  // namespace tunefleet

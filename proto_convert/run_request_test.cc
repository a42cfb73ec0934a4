#include "proto_convert/run_request.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace {

TEST(RunRequestTest, RequestCarriesWorkloadArtifactAndOptions) {
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
  options.max_repeat = 40;
  options.target_rel_ci = 0.02;
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
  EXPECT_EQ(request.options().max_repeat(), 40);
  EXPECT_EQ(request.options().target_rel_ci(), 0.02);
}

TEST(RunRequestTest, DefaultOptionsAreAutoTvmDefaults) {
  const proto::MeasureOptions defaults = ToProto(MeasureOptions());
  EXPECT_EQ(defaults.number(), 4);
  EXPECT_EQ(defaults.repeat(), 3);
  EXPECT_EQ(defaults.timeout_s(), 10.0);
  EXPECT_TRUE(defaults.check_correctness());
}

TEST(ResolveMeasureOptionsTest, UnsetFieldsTakeTheDefaults) {
  // Only the timeout set: before `optional`, number/repeat read 0 and
  // check_correctness read false, silently turning the check off.
  proto::MeasureOptions wire;
  wire.set_timeout_s(30);
  const MeasureOptions resolved = ResolveMeasureOptions(wire);
  const MeasureOptions defaults;
  EXPECT_EQ(resolved.timeout_s, 30);
  EXPECT_EQ(resolved.number, defaults.number);
  EXPECT_EQ(resolved.repeat, defaults.repeat);
  EXPECT_EQ(resolved.cooldown_interval_s, defaults.cooldown_interval_s);
  EXPECT_TRUE(resolved.check_correctness);
  EXPECT_EQ(resolved.input_seed, defaults.input_seed);
  EXPECT_EQ(resolved.max_repeat, 0);
  EXPECT_EQ(resolved.target_rel_ci, 0);
  EXPECT_TRUE(ValidateMeasureOptions(wire).ok()) << ValidateMeasureOptions(wire);
  EXPECT_TRUE(ValidateMeasureOptions(proto::MeasureOptions()).ok());
}

TEST(ResolveMeasureOptionsTest, ExplicitZeroAndFalseAreKept) {
  proto::MeasureOptions wire;
  wire.set_check_correctness(false);
  wire.set_cooldown_interval_s(0);
  wire.set_input_seed(0);
  const MeasureOptions resolved = ResolveMeasureOptions(wire);
  EXPECT_FALSE(resolved.check_correctness);
  EXPECT_EQ(resolved.cooldown_interval_s, 0);
  EXPECT_EQ(resolved.input_seed, 0u);

  wire.set_number(0);
  EXPECT_THAT(ValidateMeasureOptions(wire).message(), ::testing::HasSubstr("number = 0"));
}

TEST(ResolveMeasureOptionsTest, RoundTripsThroughToProto) {
  MeasureOptions options;
  options.number = 2;
  options.check_correctness = false;
  options.max_repeat = 9;
  options.target_rel_ci = 0.05;
  options.reject_above_s = 2e-3;
  const MeasureOptions back = ResolveMeasureOptions(ToProto(options));
  EXPECT_EQ(back.number, 2);
  EXPECT_FALSE(back.check_correctness);
  EXPECT_EQ(back.max_repeat, 9);
  EXPECT_EQ(back.target_rel_ci, 0.05);
  EXPECT_EQ(back.reject_above_s, 2e-3);
}

TEST(ValidateMeasureOptionsTest, RefusesATimeoutAboveTheCap) {
  proto::MeasureOptions wire;
  wire.set_timeout_s(900);
  const absl::Status status = ValidateMeasureOptions(wire);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("timeout_s = 900"));
  EXPECT_THAT(status.message(), ::testing::HasSubstr("cap of 600 s"));
  wire.set_timeout_s(600);
  EXPECT_TRUE(ValidateMeasureOptions(wire).ok());
}

}  // namespace
}  // namespace tunefleet

#include "proto_convert/run_request.h"

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

TEST(RunRequestTest, DefaultOptionsAreAutoTvmDefaults) {
  const proto::MeasureOptions defaults = ToProto(MeasureOptions());
  EXPECT_EQ(defaults.number(), 4);
  EXPECT_EQ(defaults.repeat(), 3);
  EXPECT_EQ(defaults.timeout_s(), 10.0);
  EXPECT_TRUE(defaults.check_correctness());
}

}  // namespace
}  // namespace tunefleet

#include "cli/fleet_commands.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

SubmitOptions DenseJob(const std::string& target) {
  SubmitOptions o;
  o.workload = "dense";
  o.shape = "64,64,64";
  o.target = target;
  return o;
}

TEST(MakeJobSpecTest, AJobStartsWarmFromTheRecordsShippedForItsTargetsFamily) {
  SubmitOptions o = DenseJob("llvm -mtriple=x86_64-linux-gnu -mcpu=znver4");
  EXPECT_EQ(MakeJobSpec(o).value().pretuned_family(), "x86_64-avx512");
  o.target = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72";
  EXPECT_EQ(MakeJobSpec(o).value().pretuned_family(), "aarch64-neon");
  o.pretuned = "none";
  EXPECT_EQ(MakeJobSpec(o).value().pretuned_family(), "");
}

TEST(MakeJobSpecTest, ARecordFileIsRefusedForTheFleet) {
  SubmitOptions o = DenseJob("llvm -mtriple=x86_64-linux-gnu -mcpu=znver4");
  o.pretuned = "/tmp/mine.jsonl";
  absl::StatusOr<proto::JobSpec> spec = MakeJobSpec(o);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr("/tmp/mine.jsonl"));
}

}  // namespace
}  // namespace tunefleet

#include "common/cuda_target.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

TEST(CudaTargetTest, ReadsArchitectureAndLimits) {
  absl::StatusOr<CudaTargetFlags> flags = ParseCudaTargetFlags(
      "cuda -arch=sm_80 -max_threads_per_block=512 -max_shared_memory_per_block=16384 "
      "-registers_per_block=32768 -keys=cuda,gpu");
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->arch, "sm_80");
  EXPECT_EQ(flags->sm, 80);
  EXPECT_EQ(flags->max_threads_per_block, 512);
  EXPECT_EQ(flags->max_shared_memory_per_block, 16384);
  EXPECT_EQ(flags->registers_per_block, 32768);
  flags = ParseCudaTargetFlags("cuda -mcpu=sm_90");
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->max_threads_per_block, 0);  // not given
  EXPECT_TRUE(IsCudaTarget("  cuda -mcpu=sm_90"));
  EXPECT_FALSE(IsCudaTarget("llvm -mcpu=native"));
}

TEST(CudaTargetTest, BadFlagsAreNamed) {
  EXPECT_THAT(ParseCudaTargetFlags("cuda").status().message(), HasSubstr("needs -mcpu=sm_NN"));
  EXPECT_THAT(ParseCudaTargetFlags("cuda -arch=volta").status().message(), HasSubstr("needs sm_NN, got \"volta\""));
  EXPECT_THAT(ParseCudaTargetFlags("cuda -mcpu=sm_90 -registers_per_block=-1").status().message(),
              HasSubstr("positive integer"));
  EXPECT_THAT(ParseCudaTargetFlags("cuda -mcpu=sm_90 -fast").status().message(),
              HasSubstr("unknown option \"-fast\""));
  EXPECT_THAT(ParseCudaTargetFlags("llvm -mcpu=native").status().message(), HasSubstr("not a cuda target"));
}

}  // namespace
}  // namespace tunefleet

#include "target/target_string.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ErrorOf(absl::string_view target) {
  absl::StatusOr<TargetString> parsed = ParseTargetString(target);
  EXPECT_FALSE(parsed.ok()) << target;
  if (!parsed.ok()) {
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  }
  return std::string(parsed.status().message());
}

TEST(TargetStringTest, ReadsLlvmTripleCpuAttributesAndTvmAttributes) {
  absl::StatusOr<TargetString> t = ParseTargetString(
      "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon,-crc -keys=arm_cpu,cpu "
      "-device=rk3399 -num-cores=4");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kind, TargetKind::kLlvm);
  EXPECT_FALSE(t->is_cuda());
  EXPECT_EQ(t->triple, "aarch64-linux-gnu");
  EXPECT_EQ(t->mcpu, "cortex-a72");
  EXPECT_THAT(t->mattrs, ElementsAre("+neon", "-crc"));
  EXPECT_THAT(t->keys, ElementsAre("arm_cpu", "cpu"));
  EXPECT_EQ(t->device, "rk3399");
  EXPECT_EQ(t->num_cores, 4);
  EXPECT_EQ(t->sm, 0);
}

TEST(TargetStringTest, NativeIsReplacedByTheGivenCpuOnly) {
  EXPECT_EQ(WithNativeCpu("llvm -mcpu=native -mattr=+avx2", "znver4"),
            "llvm -mcpu=znver4 -mattr=+avx2");
  EXPECT_EQ(WithNativeCpu("llvm  -mcpu=skylake", "znver4"), "llvm  -mcpu=skylake");
  EXPECT_EQ(WithNativeCpu("llvm -mcpu=native", ""), "llvm -mcpu=native");
}

TEST(TargetStringTest, BareLlvmMeansTheHost) {
  absl::StatusOr<TargetString> t = ParseTargetString("  llvm   -mcpu=native ");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->triple.empty());
  EXPECT_EQ(t->mcpu, "native");
  ASSERT_TRUE(ParseTargetString("llvm").ok());
  EXPECT_TRUE(ParseTargetString("llvm")->mcpu.empty());
}

TEST(TargetStringTest, ReadsCudaArchitectureAndLimits) {
  absl::StatusOr<TargetString> t = ParseTargetString(
      "cuda -arch=sm_80 -max_threads_per_block=512 -max_shared_memory_per_block=16384 "
      "-registers_per_block=32768 -thread_warp_size=32 -keys=cuda,gpu -device=a100");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->is_cuda());
  EXPECT_EQ(t->triple, "nvptx64-nvidia-cuda");
  EXPECT_EQ(t->mcpu, "sm_80");
  EXPECT_EQ(t->sm, 80);
  EXPECT_EQ(t->max_threads_per_block, 512);
  EXPECT_EQ(t->max_shared_memory_per_block, 16384);
  EXPECT_EQ(t->registers_per_block, 32768);
  EXPECT_EQ(t->thread_warp_size, 32);
  EXPECT_EQ(t->device, "a100");

  t = ParseTargetString("cuda -mcpu=sm_90");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->sm, 90);
  EXPECT_EQ(t->max_threads_per_block, 0);  // not given
}

TEST(TargetStringTest, NvptxTripleMeansCuda) {
  absl::StatusOr<TargetString> t =
      ParseTargetString("llvm -mtriple=nvptx64-nvidia-cuda -mcpu=sm_80");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->is_cuda());
  EXPECT_EQ(t->sm, 80);
  EXPECT_THAT(ErrorOf("llvm -mtriple=nvptx64-nvidia-cuda -mcpu=sm_80 -mattr=+ptx80"),
              HasSubstr("-mattr is not supported for CUDA targets"));
  EXPECT_THAT(ErrorOf("llvm -mtriple=nvptx64-nvidia-cuda"), HasSubstr("needs -mcpu=sm_NN"));
  EXPECT_THAT(ErrorOf("llvm -mtriple=nvptx64-nvidia-cuda -mcpu=native"), HasSubstr("needs sm_NN"));
}

TEST(TargetStringTest, IsCudaTargetStringNeedsNoFullParse) {
  EXPECT_TRUE(IsCudaTargetString("  cuda -mcpu=sm_90"));
  EXPECT_TRUE(IsCudaTargetString("cuda"));
  EXPECT_TRUE(IsCudaTargetString("llvm -mtriple=nvptx64-nvidia-cuda -mcpu=sm_80"));
  EXPECT_FALSE(IsCudaTargetString("llvm -mcpu=native"));
  EXPECT_FALSE(IsCudaTargetString(""));
}

TEST(TargetStringTest, UnknownOptionsAreNamedWithTheAcceptedOnes) {
  EXPECT_THAT(ErrorOf("llvm -O3"), AllOf(HasSubstr("unknown option \"-O3\""),
                                         HasSubstr("-mtriple, -mcpu, -mattr, -keys")));
  EXPECT_THAT(ErrorOf("cuda -mcpu=sm_90 -fast"),
              AllOf(HasSubstr("unknown option \"-fast\""), HasSubstr("-max_threads_per_block")));
  // GPU limits belong to cuda targets, triples to llvm ones.
  EXPECT_THAT(ErrorOf("llvm -max_threads_per_block=256"),
              HasSubstr("unknown option \"-max_threads_per_block\""));
  EXPECT_THAT(ErrorOf("cuda -mcpu=sm_90 -mtriple=x86_64-linux-gnu"),
              HasSubstr("unknown option \"-mtriple\""));
  EXPECT_THAT(ErrorOf("llvm mcpu=native"), HasSubstr("unknown option \"mcpu\""));
}

TEST(TargetStringTest, BadValuesNameTheOption) {
  EXPECT_THAT(ErrorOf("opencl -device=mali"),
              AllOf(HasSubstr("unsupported target"), HasSubstr("must start with \"llvm\"")));
  EXPECT_THAT(ErrorOf(""), HasSubstr("must start with \"llvm\""));
  EXPECT_THAT(ErrorOf("llvm -mtriple=z80-none"), HasSubstr("unknown triple \"z80-none\""));
  EXPECT_THAT(ErrorOf("llvm -mattr=avx2"),
              HasSubstr("\"avx2\" must look like +feature or -feature"));
  EXPECT_THAT(ErrorOf("llvm -mcpu"), HasSubstr("option -mcpu needs a value"));
  EXPECT_THAT(ErrorOf("llvm -mcpu="), HasSubstr("option -mcpu needs a value"));
  EXPECT_THAT(ErrorOf("llvm -mcpu=znver3 -mcpu=haswell"), HasSubstr("option -mcpu is given twice"));
  EXPECT_THAT(ErrorOf("cuda -mcpu=sm_90 -arch=sm_80"), HasSubstr("given twice"));
  EXPECT_THAT(ErrorOf("llvm -num-cores=0"), HasSubstr("\"-num-cores=0\" needs a positive integer"));
  EXPECT_THAT(ErrorOf("llvm -num-cores=four"), HasSubstr("positive integer"));
  EXPECT_THAT(ErrorOf("llvm -keys=cpu,,arm"), HasSubstr("empty key"));
  EXPECT_THAT(ErrorOf("cuda"), HasSubstr("needs -mcpu=sm_NN"));
  EXPECT_THAT(ErrorOf("cuda -arch=volta"), HasSubstr("-arch needs sm_NN, got \"volta\""));
  EXPECT_THAT(ErrorOf("cuda -mcpu=sm_90 -registers_per_block=-1"), HasSubstr("positive integer"));
  EXPECT_THAT(ErrorOf("cuda -mcpu=sm_90 -max_threads_per_block=0"), HasSubstr("positive integer"));
}

}  // namespace
}  // namespace tunefleet

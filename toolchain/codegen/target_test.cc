#include "toolchain/codegen/target.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(TargetTest, ParsesTripleCpuAndAttributes) {
  auto t = ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=znver3 -mattr=+avx2,+fma");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->arch->name(), "x86_64");
  EXPECT_EQ(t->cpu, "znver3");
  EXPECT_EQ(t->features, "+avx2,+fma");
  EXPECT_EQ(t->vector_bits, 256);
}

TEST(TargetTest, VectorWidthFollowsTheCpu) {
  EXPECT_EQ(ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512")->vector_bits, 512);
  EXPECT_EQ(ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64")->vector_bits, 128);
  auto arm = ParseTarget("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72");
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_EQ(arm->arch->name(), "aarch64");
  EXPECT_EQ(arm->vector_bits, 128);
  // 32 NEON registers: 8- and 16-lane vectors are taken as 2 or 4 of them.
  EXPECT_EQ(arm->max_vector_bits, 512);
  EXPECT_EQ(ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=znver3")->max_vector_bits, 256);
}

TEST(TargetTest, FamiliesGroupCpusWhoseConfigsCarryOver) {
  EXPECT_EQ(ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=znver4")->family(), "x86_64-avx512");
  EXPECT_EQ(ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=sapphirerapids")->family(),
            "x86_64-avx512");
  EXPECT_EQ(ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=znver3")->family(), "x86_64-avx2");
  EXPECT_EQ(ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64")->family(), "x86_64-sse");
  EXPECT_EQ(ParseTarget("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72")->family(),
            "aarch64-neon");
  EXPECT_EQ(ParseTarget("cuda -mcpu=sm_90")->family(), "cuda-sm_90");
}

TEST(TargetTest, RegisterFileFollowsTheFeatures) {
  EXPECT_EQ(ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=znver4")->vector_registers, 32);
  EXPECT_EQ(ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell")->vector_registers, 16);
  EXPECT_EQ(ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64")->vector_registers, 16);
  // Features decide, not the CPU's name: AVX-512 turned off leaves 16 ymm.
  auto no512 = ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=znver4 -mattr=-avx512f");
  ASSERT_TRUE(no512.ok()) << no512.status();
  EXPECT_EQ(no512->vector_bits, 256);
  EXPECT_EQ(no512->vector_registers, 16);
  EXPECT_EQ(ParseTarget("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72")->vector_registers, 32);
  EXPECT_EQ(ParseTarget("cuda -mcpu=sm_90")->vector_registers, 0);
}

TEST(TargetTest, NativeResolvesToTheHostCpu) {
  auto t = ParseTarget("llvm -mcpu=native");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NE(t->cpu, "native");
  EXPECT_FALSE(t->features.empty());
  EXPECT_EQ(HostTargetString().rfind("llvm -mcpu=", 0), 0u);
}

TEST(TargetTest, BadTargetsNameTheProblem) {
  EXPECT_NE(ParseTarget("opencl").status().message().find("must start with \"llvm\""),
            std::string::npos);
  EXPECT_NE(ParseTarget("llvm -O3").status().message().find("unknown option \"-O3\""),
            std::string::npos);
  EXPECT_NE(ParseTarget("llvm -mtriple=z80-none").status().message().find("unknown triple"),
            std::string::npos);
  EXPECT_NE(ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=pentium9")
                .status()
                .message()
                .find("unknown CPU"),
            std::string::npos);
  EXPECT_NE(ParseTarget("llvm -mattr=avx2").status().message().find("+feature"), std::string::npos);
}

TEST(TargetTest, CudaTargetsCarryTheArchitectureAndLimits) {
  auto t = ParseTarget("cuda -mcpu=sm_90");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->is_cuda());
  EXPECT_TRUE(t->arch->is_gpu());
  EXPECT_EQ(t->triple, "nvptx64-nvidia-cuda");
  EXPECT_EQ(t->sm_version(), 90);
  EXPECT_EQ(t->max_threads_per_block, 1024);
  EXPECT_EQ(t->max_shared_memory_per_block, 48 * 1024);

  auto limited = ParseTarget(
      "cuda -arch=sm_80 -max_threads_per_block=512 -max_shared_memory_per_block=16384 "
      "-registers_per_block=32768");
  ASSERT_TRUE(limited.ok()) << limited.status();
  EXPECT_EQ(limited->cpu, "sm_80");
  EXPECT_EQ(limited->max_threads_per_block, 512);
  EXPECT_EQ(limited->max_shared_memory_per_block, 16384);
  EXPECT_EQ(limited->registers_per_block, 32768);
  // More than 48 KiB can only be dynamic shared memory, which kernels here do not use.
  EXPECT_EQ(ParseTarget("cuda -mcpu=sm_90 -max_shared_memory_per_block=232448")
                ->max_shared_memory_per_block,
            48 * 1024);
}

TEST(TargetTest, NvptxTripleMeansCuda) {
  auto t = ParseTarget("llvm -mtriple=nvptx64-nvidia-cuda -mcpu=sm_80");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->is_cuda());
  EXPECT_EQ(t->sm_version(), 80);
  EXPECT_EQ(t->features, "+ptx78");
}

TEST(TargetTest, BadCudaTargetsNameTheProblem) {
  EXPECT_NE(ParseTarget("cuda").status().message().find("needs -mcpu=sm_NN"), std::string::npos);
  EXPECT_NE(ParseTarget("cuda -mcpu=sm_99").status().message().find("\"sm_99\""),
            std::string::npos);
  EXPECT_NE(ParseTarget("cuda -mcpu=sm_60").status().message().find("unsupported"),
            std::string::npos);
  EXPECT_NE(ParseTarget("cuda -mcpu=sm_90 -max_threads_per_block=0")
                .status()
                .message()
                .find("positive integer"),
            std::string::npos);
  EXPECT_NE(
      ParseTarget("cuda -mcpu=sm_90 -fast").status().message().find("unknown option \"-fast\""),
      std::string::npos);
}

TEST(TargetTest, TvmDeviceAttributesAreAcceptedAndChangeNoCode) {
  auto plain = ParseTarget("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72");
  auto described = ParseTarget(
      "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -keys=arm_cpu,cpu -device=rk3399 "
      "-num-cores=4");
  ASSERT_TRUE(described.ok()) << described.status();
  EXPECT_EQ(described->cpu, plain->cpu);
  EXPECT_EQ(described->features, plain->features);
  auto gpu = ParseTarget("cuda -mcpu=sm_90 -keys=cuda,gpu -device=h100 -thread_warp_size=32");
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  EXPECT_EQ(gpu->sm_version(), 90);
}

}  // namespace
}  // namespace tunefleet

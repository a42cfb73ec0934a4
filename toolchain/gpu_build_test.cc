// The CUDA path of the builder, checked without a GPU:
//  - every GPU template, on awkward small shapes and random configs, run by
//    the GPU emulator (tuner_core/ir/gpu_emulator.h: blocks, threads, shared
//    memory and barriers with CUDA's semantics) against the workload's
//    reference;
//  - many sampled configs on real shapes built to PTX: the ones that pass
//    the limits check must all assemble with ptxas, within the registers the
//    launch allows; the ones that do not fail as INSTANTIATION_ERROR naming
//    the limit.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "common/gpu_artifact.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "toolchain/builder.h"
#include "toolchain/gpu_kernel_info.h"
#include "tuner_core/ir/gpu_emulator.h"
#include "tuner_core/templates/template.h"
#include "tuner_core/workloads/workload.h"
#include "tuner_core/workloads/workload_test_util.h"

namespace tunefleet {
namespace {

constexpr char kPtxas[] = "/usr/local/cuda/bin/ptxas";

struct Case {
  std::string tmpl;
  std::string workload;
  nlohmann::json args;
};

// `cases`, then every conv2d_nchw argument set of `convs` once per CUDA
// conv template: the implicit GEMM and the direct template face the same
// shapes.
std::vector<Case> WithConvCases(std::vector<Case> cases, const std::vector<nlohmann::json>& convs) {
  for (const char* tmpl : {"conv2d_direct.cuda", "conv2d_igemm.cuda"}) {
    for (const nlohmann::json& args : convs) cases.push_back({tmpl, "conv2d_nchw", args});
  }
  return cases;
}

std::vector<Case> SmallCases() {
  return WithConvCases(
      {
          {"dense_gpu.cuda", "dense", {{"M", 24}, {"N", 40}, {"K", 12}}},
          {"dense_gpu.cuda", "dense", {{"M", 16}, {"N", 36}, {"K", 20}, {"layout", "KN"}}},
          {"dense_gpu.cuda", "dense", {{"M", 1}, {"N", 30}, {"K", 8}}},
      },
      {
          {{"N", 1},
           {"C", 6},
           {"H", 7},
           {"W", 9},
           {"K", 8},
           {"R", 3},
           {"S", 3},
           {"stride", 1},
           {"padding", 1}},
          {{"N", 2},
           {"C", 4},
           {"H", 9},
           {"W", 8},
           {"K", 6},
           {"R", 3},
           {"S", 3},
           {"stride", 2},
           {"padding", {0, 1, 2, 1}}},
          {{"N", 1},
           {"C", 5},
           {"H", 8},
           {"W", 8},
           {"K", 4},
           {"R", 3},
           {"S", 3},
           {"stride", 1},
           {"padding", 2},
           {"dilation", 2}},
          {{"N", 1},
           {"C", 8},
           {"H", 6},
           {"W", 6},
           {"K", 12},
           {"R", 1},
           {"S", 1},
           {"stride", 1},
           {"padding", 0}},
      });
}

TEST(GpuBuildTest, TemplatesComputeTheReferenceUnderGpuSemantics) {
  auto target = ParseTarget("cuda -mcpu=sm_90");
  ASSERT_TRUE(target.ok()) << target.status();
  std::mt19937_64 rng(7);
  int checked = 0;
  for (const Case& c : SmallCases()) {
    auto workload = MakeWorkload(c.workload, c.args);
    ASSERT_TRUE(workload.ok()) << workload.status();
    auto tmpl = FindTemplate(c.tmpl);
    ASSERT_TRUE(tmpl.ok()) << tmpl.status();
    auto space = (*tmpl)->DefineSpace(**workload);
    ASSERT_TRUE(space.ok()) << space.status();
    int tried = 0;
    for (int attempt = 0; attempt < 200 && tried < 10; ++attempt) {
      auto config = space->Get(std::uniform_int_distribution<int64_t>(0, space->size() - 1)(rng));
      ASSERT_TRUE(config.ok());
      auto func = (*tmpl)->Instantiate(**workload, *config);
      if (!func.ok()) continue;  // e.g. vec_load not dividing the panel: INSTANTIATION_ERROR
      if (!AnalyzeGpuKernel(*func, *target).ok()) continue;
      ++tried;
      workload_test::ReferenceBuffers buffers =
          workload_test::MakeReferenceBuffers(**workload, &rng);
      const std::vector<std::vector<float>>& storage = buffers.kernel;
      const std::vector<std::vector<float>>& reference = buffers.reference;
      absl::Status run = ir::EmulateGpuKernel(*func, buffers.KernelPointers());
      ASSERT_TRUE(run.ok()) << c.tmpl << " " << c.args.dump() << " " << config->ToString() << ": "
                            << run;
      for (size_t t = 0; t < storage.size(); ++t) {
        if (!(*workload)->tensors()[t].is_output) continue;
        for (size_t i = 0; i < storage[t].size(); ++i) {
          ASSERT_NEAR(storage[t][i], reference[t][i], 1e-4 + 1e-4 * std::fabs(reference[t][i]))
              << c.tmpl << " " << c.args.dump() << " " << config->ToString() << " element " << i;
        }
      }
      ++checked;
    }
    EXPECT_GT(tried, 0) << c.tmpl << " " << c.args.dump() << ": no config fits the limits";
  }
  std::printf("GPU templates: %d configs emulated, all equal to the reference\n", checked);
}

// Runs ptxas on `ptx` for `arch`; returns its exit status and fills the
// registers it reports (-v).
int Assemble(const std::string& ptx, const std::string& arch, int* registers, std::string* log,
             int* spill_bytes = nullptr) {
  char path[] = "/tmp/tunefleet_gpu_build_test_XXXXXX.ptx";
  const int fd = mkstemps(path, 4);
  if (fd < 0) return -1;
  close(fd);
  std::ofstream(path) << ptx;
  const std::string log_path = std::string(path) + ".log";
  const std::string command = std::string(kPtxas) + " -v -arch=" + arch + " -o /dev/null " + path +
                              " > " + log_path + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(log_path);
  log->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::smatch match;
  if (std::regex_search(*log, match, std::regex("Used ([0-9]+) registers")))
    *registers = std::stoi(match[1]);
  if (spill_bytes != nullptr &&
      std::regex_search(*log, match, std::regex("([0-9]+) bytes spill stores")))
    *spill_bytes = std::stoi(match[1]);
  unlink(path);
  unlink(log_path.c_str());
  return status;
}

TEST(GpuBuildTest, SampledConfigsThatPassTheLimitsAssembleWithPtxas) {
  if (access(kPtxas, X_OK) != 0) {
    GTEST_SKIP() << "no ptxas at " << kPtxas
                 << " (the CUDA toolkit is not installed): PTX not assembled";
  }
  const std::vector<Case> cases = WithConvCases(
      {
          {"dense_gpu.cuda", "dense", {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
          {"dense_gpu.cuda", "dense", {{"M", 16}, {"N", 1024}, {"K", 1024}, {"layout", "KN"}}},
          {"dense_gpu.cuda", "dense", {{"M", 1}, {"N", 1000}, {"K", 512}}},
      },
      {
          // ResNet-18 layer 2
          {{"N", 1},
           {"C", 64},
           {"H", 56},
           {"W", 56},
           {"K", 64},
           {"R", 3},
           {"S", 3},
           {"stride", 1},
           {"padding", 1}},
          // ResNet-18 layer 4, stride 2
          {{"N", 1},
           {"C", 128},
           {"H", 28},
           {"W", 28},
           {"K", 256},
           {"R", 3},
           {"S", 3},
           {"stride", 2},
           {"padding", 1}},
          // the 7x7 stem
          {{"N", 1},
           {"C", 3},
           {"H", 224},
           {"W", 224},
           {"K", 64},
           {"R", 7},
           {"S", 7},
           {"stride", 2},
           {"padding", 3}},
      });
  std::mt19937_64 rng(11);
  int sampled = 0, within_limits = 0, assembled = 0, max_registers = 0, spilling = 0;
  for (const char* arch : {"sm_90", "sm_80"}) {
    auto target = ParseTarget(std::string("cuda -mcpu=") + arch);
    ASSERT_TRUE(target.ok()) << target.status();
    for (const Case& c : cases) {
      auto workload = MakeWorkload(c.workload, c.args);
      ASSERT_TRUE(workload.ok()) << workload.status();
      auto tmpl = FindTemplate(c.tmpl);
      ASSERT_TRUE(tmpl.ok());
      auto space = (*tmpl)->DefineSpace(**workload);
      ASSERT_TRUE(space.ok()) << space.status();
      for (int i = 0; i < 12; ++i) {
        auto config = space->Get(std::uniform_int_distribution<int64_t>(0, space->size() - 1)(rng));
        ASSERT_TRUE(config.ok());
        ++sampled;
        BuildResult built = BuildCandidate(**tmpl, **workload, *config, *target);
        if (!built.ok()) {
          ASSERT_EQ(built.error_no, MeasureErrorNo::kInstantiationError)
              << config->ToString() << ": " << built.error_msg;
          EXPECT_FALSE(built.error_msg.empty());
          continue;
        }
        ++within_limits;
        auto artifact = ParseGpuArtifact(built.artifact.shared_object);
        ASSERT_TRUE(artifact.ok()) << artifact.status();
        EXPECT_NE(artifact->ptx.find(std::string(".target ") + arch), std::string::npos);
        int registers = 0, spill_bytes = 0;
        std::string log;
        const int status = Assemble(artifact->ptx, arch, &registers, &log, &spill_bytes);
        ASSERT_EQ(status, 0) << c.tmpl << " " << c.args.dump() << " " << config->ToString() << "\n"
                             << log;
        ++assembled;
        max_registers = std::max(max_registers, registers);
        if (spill_bytes > 0) {
          ++spilling;
          std::printf("spills %d bytes: %s %s %s\n", spill_bytes, c.tmpl.c_str(),
                      c.args.dump().c_str(), config->ToString().c_str());
        }
        EXPECT_LE(int64_t{registers} * artifact->launch.threads_per_block(), 65536)
            << config->ToString() << ": ptxas used " << registers << " registers";
      }
    }
  }
  std::printf(
      "PTX: %d configs sampled, %d within the limits, %d of those assembled with ptxas "
      "(%.0f%%), at most %d registers per thread, %d spilling to local memory\n",
      sampled, within_limits, assembled, within_limits ? 100.0 * assembled / within_limits : 0.0,
      max_registers, spilling);
  EXPECT_GT(within_limits, sampled / 4);
  // The limits check estimates registers, not spills: a few sampled configs
  // (4 of 136 when this was written, 4 to 976 bytes) spill. More would mean
  // the estimate has drifted from what ptxas does.
  EXPECT_LE(spilling * 10, assembled) << spilling << " of " << assembled << " configs spill";
}

// How often `needle` occurs in `text`.
int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The instruction census of the GEMM knobs: the config's 128-bit fragment
// and global loads are in the PTX, double buffering keeps its staging
// registers in registers, and ptxas spills nothing.
TEST(GpuBuildTest, GemmKnobsShowInThePtx) {
  auto workload = MakeWorkload("dense", {{"M", 4096}, {"N", 4096}, {"K", 4096}});
  ASSERT_TRUE(workload.ok());
  auto tmpl = FindTemplate("dense_gpu.cuda");
  ASSERT_TRUE(tmpl.ok());
  auto space = (*tmpl)->DefineSpace(**workload);
  ASSERT_TRUE(space.ok());
  auto target = ParseTarget("cuda -mcpu=sm_90");
  ASSERT_TRUE(target.ok());
  auto ptx_of = [&](const std::string& entities) -> std::string {
    auto config = space->FromJsonString(R"({"entity": [)" + entities + "]}");
    EXPECT_TRUE(config.ok()) << config.status();
    if (!config.ok()) return "";
    BuildResult built = BuildCandidate(**tmpl, **workload, *config, *target);
    EXPECT_TRUE(built.ok()) << built.error_msg;
    if (!built.ok()) return "";
    auto artifact = ParseGpuArtifact(built.artifact.shared_object);
    EXPECT_TRUE(artifact.ok()) << artifact.status();
    return artifact.ok() ? artifact->ptx : "";
  };
  // 128 x 128 block tile, 256 threads of 8 x 8, bk 8: CUTLASS's SIMT shape.
  const std::string tiles =
      R"(["tile_m", "sp", [32, 16, 8]], ["tile_n", "sp", [32, 16, 8]], ["tile_k", "sp", [512, 8]])";
  const std::string fast = R"(, ["frag_m", "ot", 4], ["frag_n", "ot", 4], ["vec_load", "ot", 4],
      ["pad", "ot", 4], ["double_buffer", "ot", 1], ["raster", "ot", 8])";
  const std::string scalar = R"(, ["frag_m", "ot", 1], ["frag_n", "ot", 1], ["vec_load", "ot", 1],
      ["pad", "ot", 0], ["double_buffer", "ot", 0], ["raster", "ot", 1])";
  const std::string vector_ptx = ptx_of(tiles + fast);
  const std::string scalar_ptx = ptx_of(tiles + scalar);
  ASSERT_FALSE(vector_ptx.empty());
  ASSERT_FALSE(scalar_ptx.empty());
  // Per k: 2 + 2 float4 fragments, 8 of them per K step, unrolled.
  EXPECT_GE(Count(vector_ptx, "ld.shared.v4.f32"), 4 * 8);
  EXPECT_GE(Count(vector_ptx, "ld.global.nc.v4.f32"), 2);
  EXPECT_GE(Count(vector_ptx, "st.global.v4.f32"), 16);
  EXPECT_EQ(Count(vector_ptx, ".local"), 0) << "staging or accumulators in local memory";
  EXPECT_EQ(Count(scalar_ptx, "ld.shared.v4.f32"), 0);
  EXPECT_EQ(Count(scalar_ptx, "ld.global.nc.v4.f32"), 0);
  if (access(kPtxas, X_OK) != 0) GTEST_SKIP() << "no ptxas at " << kPtxas;
  int registers = 0;
  std::string log;
  ASSERT_EQ(Assemble(vector_ptx, "sm_90", &registers, &log), 0) << log;
  std::printf("128x128x8 double-buffered SIMT GEMM: %s", log.c_str());
  EXPECT_NE(log.find("0 bytes spill stores"), std::string::npos) << log;
  EXPECT_LE(registers, 255);
}

TEST(GpuBuildTest, ConfigsBeyondTheLimitsFailAtBuildTime) {
  auto workload = MakeWorkload("dense", {{"M", 4096}, {"N", 4096}, {"K", 4096}});
  ASSERT_TRUE(workload.ok());
  auto tmpl = FindTemplate("dense_gpu.cuda");
  ASSERT_TRUE(tmpl.ok());
  auto space = (*tmpl)->DefineSpace(**workload);
  ASSERT_TRUE(space.ok());
  // 32 x 64 threads = 2048 per block.
  auto too_many = space->FromJsonString(
      R"({"entity": [["tile_m", "sp", [128, 32, 1]], ["tile_n", "sp", [64, 64, 1]], ["tile_k", "sp", [512, 8]], ["frag_m", "ot", 4], ["frag_n", "ot", 4], ["vec_load", "ot", 1], ["pad", "ot", 0], ["double_buffer", "ot", 0], ["raster", "ot", 1]]})");
  ASSERT_TRUE(too_many.ok()) << too_many.status();
  auto small = ParseTarget("cuda -mcpu=sm_90");
  BuildResult r = BuildCandidate(**tmpl, **workload, *too_many, *small);
  EXPECT_EQ(r.error_no, MeasureErrorNo::kInstantiationError);
  EXPECT_NE(r.error_msg.find("2048 threads per block"), std::string::npos) << r.error_msg;

  // Fits 1024 threads, not a device that allows 256.
  auto fits = space->FromJsonString(
      R"({"entity": [["tile_m", "sp", [256, 16, 1]], ["tile_n", "sp", [128, 32, 1]], ["tile_k", "sp", [512, 8]], ["frag_m", "ot", 4], ["frag_n", "ot", 4], ["vec_load", "ot", 1], ["pad", "ot", 0], ["double_buffer", "ot", 0], ["raster", "ot", 1]]})");
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_TRUE(BuildCandidate(**tmpl, **workload, *fits, *small).ok());
  auto limited = ParseTarget("cuda -mcpu=sm_90 -max_threads_per_block=256");
  r = BuildCandidate(**tmpl, **workload, *fits, *limited);
  EXPECT_EQ(r.error_no, MeasureErrorNo::kInstantiationError);
  EXPECT_NE(r.error_msg.find("limit of 256"), std::string::npos) << r.error_msg;

  // 8x8 register tiles x 1024 threads: too many registers per block.
  auto registers = space->FromJsonString(
      R"({"entity": [["tile_m", "sp", [16, 32, 8]], ["tile_n", "sp", [16, 32, 8]], ["tile_k", "sp", [512, 8]], ["frag_m", "ot", 1], ["frag_n", "ot", 1], ["vec_load", "ot", 1], ["pad", "ot", 0], ["double_buffer", "ot", 0], ["raster", "ot", 1]]})");
  ASSERT_TRUE(registers.ok()) << registers.status();
  r = BuildCandidate(**tmpl, **workload, *registers, *small);
  EXPECT_EQ(r.error_no, MeasureErrorNo::kInstantiationError);
  EXPECT_NE(r.error_msg.find("registers per block"), std::string::npos) << r.error_msg;

  // Shared memory: a conv tile whose staged window and weights exceed 48 KiB.
  auto conv = MakeWorkload("conv2d_nchw", {{"N", 1},
                                           {"C", 64},
                                           {"H", 56},
                                           {"W", 56},
                                           {"K", 64},
                                           {"R", 3},
                                           {"S", 3},
                                           {"stride", 1},
                                           {"padding", 1}});
  ASSERT_TRUE(conv.ok());
  auto conv_tmpl = FindTemplate("conv2d_direct.cuda");
  auto conv_space = (*conv_tmpl)->DefineSpace(**conv);
  ASSERT_TRUE(conv_space.ok());
  auto big = conv_space->FromJsonString(
      R"({"entity": [["tile_f", "sp", [8, 2, 4]], ["tile_y", "sp", [2, 7, 4]], ["tile_x", "sp", [2, 7, 4]], ["tile_rc", "sp", [4, 16]], ["unroll_rs", "ot", 0]]})");
  ASSERT_TRUE(big.ok()) << big.status();
  r = BuildCandidate(**conv_tmpl, **conv, *big, *small);
  EXPECT_EQ(r.error_no, MeasureErrorNo::kInstantiationError);
  EXPECT_NE(r.error_msg.find("shared memory"), std::string::npos) << r.error_msg;
}

TEST(GpuBuildTest, CpuAndGpuTemplatesRejectTheOtherKindOfTarget) {
  auto workload = MakeWorkload("dense", {{"M", 64}, {"N", 64}, {"K", 64}});
  ASSERT_TRUE(workload.ok());
  auto gpu_tmpl = FindTemplate("dense_gpu.cuda");
  auto cpu_tmpl = FindTemplate("dense_pack.x86");
  auto gpu_space = (*gpu_tmpl)->DefineSpace(**workload);
  auto cpu_space = (*cpu_tmpl)->DefineSpace(**workload);
  BuildResult r = BuildCandidate(**gpu_tmpl, **workload, *gpu_space->Get(0), *ParseTarget("llvm"));
  EXPECT_EQ(r.error_no, MeasureErrorNo::kInstantiationError);
  EXPECT_NE(r.error_msg.find("only a CUDA target has"), std::string::npos) << r.error_msg;
  r = BuildCandidate(**cpu_tmpl, **workload, *cpu_space->Get(0), *ParseTarget("cuda -mcpu=sm_90"));
  EXPECT_EQ(r.error_no, MeasureErrorNo::kInstantiationError);
  EXPECT_FALSE(r.error_msg.empty());
  EXPECT_EQ((*DefaultTemplate("dense", "cuda -mcpu=sm_90"))->name(), "dense_gpu.cuda");
  // The implicit GEMM was faster than the direct template on all 11 of
  // ResNet-18's layers on an H200 (bench/results/gpu_h200_issue38.log).
  EXPECT_EQ((*DefaultTemplate("conv2d_nchw", "cuda -mcpu=sm_80"))->name(), "conv2d_igemm.cuda");
  EXPECT_EQ((*DefaultTemplate("dense", "llvm -mcpu=native"))->name(), "dense_gemm.x86");
  EXPECT_EQ((*DefaultTemplate("dense", "llvm -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90"))->name(),
            "dense_gpu.cuda");
  EXPECT_FALSE(DefaultTemplate("batch_matmul", "cuda -mcpu=sm_90").ok());
}

}  // namespace
}  // namespace tunefleet

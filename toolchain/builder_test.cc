// End-to-end correctness of the builder: random configs of every template,
// on shapes that divide no tile, compiled to shared objects, loaded and run
// against the workload's reference. Also: invalid configs fail with
// INSTANTIATION_ERROR and a reason, never a crash.
#include "toolchain/builder.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/kernel_abi.h"
#include "common/sha256.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "toolchain/kernel_test_util.h"
#include "tuner_core/ir/ir_printer.h"
#include "tuner_core/templates/register_fit.h"
#include "tuner_core/workloads/workload.h"
#include "tuner_core/workloads/workload_test_util.h"

namespace tunefleet {
namespace {

// Loads the .so from a temporary file and runs it once on seeded inputs.
::testing::AssertionResult RunAndCheck(const Artifact& artifact, const Workload& workload,
                                       uint64_t seed) {
  std::string load_error;
  void* handle = kernel_test::LoadSharedObject(artifact.shared_object, &load_error);
  if (handle == nullptr) return ::testing::AssertionFailure() << "dlopen: " << load_error;
  auto entry = reinterpret_cast<TfKernelEntry>(dlsym(handle, artifact.entry_name.c_str()));
  if (entry == nullptr) {
    dlclose(handle);
    return ::testing::AssertionFailure() << "missing entry " << artifact.entry_name;
  }
  std::mt19937_64 rng(seed);
  workload_test::ReferenceBuffers buffers = workload_test::MakeReferenceBuffers(workload, &rng);
  const std::vector<std::vector<float>>& storage = buffers.kernel;
  const std::vector<std::vector<float>>& reference = buffers.reference;
  const std::vector<float*> pointers = buffers.KernelPointers();
  std::vector<void*> args(pointers.begin(), pointers.end());
  // A staged kernel (common/kernel_abi.h): poisoned staged buffers after the
  // tensors, then prepare, entry (twice: it must not consume its staged
  // inputs) and finish.
  std::vector<std::vector<float>> staged;
  const auto* staged_elements = static_cast<const int64_t*>(
      dlsym(handle, (artifact.entry_name + TF_KERNEL_STAGED_ELEMENTS_SUFFIX).c_str()));
  for (int i = 0; staged_elements != nullptr && staged_elements[i] != -1; ++i) {
    staged.emplace_back(staged_elements[i], std::nanf(""));
  }
  for (auto& buffer : staged) args.push_back(buffer.data());
  auto prepare = reinterpret_cast<TfKernelEntry>(
      dlsym(handle, (artifact.entry_name + TF_KERNEL_PREPARE_SUFFIX).c_str()));
  auto finish = reinterpret_cast<TfKernelEntry>(
      dlsym(handle, (artifact.entry_name + TF_KERNEL_FINISH_SUFFIX).c_str()));
  int32_t rc = prepare != nullptr ? prepare(args.data(), &kernel_test::kSerialRuntime) : 0;
  for (int call = 0; call < (staged.empty() ? 1 : 2) && rc == 0; ++call)
    rc = entry(args.data(), &kernel_test::kSerialRuntime);
  if (rc == 0 && finish != nullptr) rc = finish(args.data(), &kernel_test::kSerialRuntime);
  dlclose(handle);
  if (rc != 0) return ::testing::AssertionFailure() << "kernel returned " << rc;
  const double tolerance = 1e-5 * std::sqrt(static_cast<double>(workload.ReductionLength())) * 8;
  for (size_t t = 0; t < storage.size(); ++t) {
    if (!workload.tensors()[t].is_output) continue;
    for (size_t i = 0; i < storage[t].size(); ++i) {
      const float out = storage[t][i], ref = reference[t][i];
      if (!(std::fabs(out - ref) <= tolerance * (1.0 + std::fabs(ref)))) {
        return ::testing::AssertionFailure()
               << "output " << i << " = " << out << ", reference " << ref;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

TargetSpec HostTarget() {
  auto target = ParseTarget("llvm -mcpu=native");
  EXPECT_TRUE(target.ok()) << target.status();
  return *target;
}

struct Shape {
  int64_t m, n, k;
  const char* layout;
};

// Builds `configs_per_workload` random configs of the template for each
// workload and checks every one that builds against the reference.
void CheckRandomConfigsOn(const std::string& template_name,
                          const std::vector<nlohmann::json>& workloads, int configs_per_workload,
                          uint64_t seed) {
  const TargetSpec target = HostTarget();
  int built = 0, instantiation_errors = 0;
  kernel_test::ForRandomConfigs(
      template_name, workloads, configs_per_workload, seed,
      [&](const Template& tmpl, const Workload& workload, const Config& config, int64_t index) {
        BuildResult result = BuildCandidate(tmpl, workload, config, target);
        if (result.error_no == MeasureErrorNo::kInstantiationError) {
          // Only configs the target cannot take (vectors wider than its
          // registers) or oversized tiles may fail, and they must say why.
          EXPECT_FALSE(result.error_msg.empty());
          ++instantiation_errors;
          return;
        }
        ASSERT_TRUE(result.ok()) << MeasureErrorName(result.error_no) << ": " << result.error_msg
                                 << " config " << config.ToString();
        ++built;
        EXPECT_TRUE(RunAndCheck(result.artifact, workload, index))
            << workload.Describe() << " config " << config.ToString();
      });
  // Enough kernels checked, whatever the host: on AVX2 the 16-lane vectors
  // and the tiles 16 registers cannot hold are refused (a third to a half
  // of these spaces build there; most of them with AVX-512).
  EXPECT_GE(built, 20);
  EXPECT_GE(4 * built, built + instantiation_errors);
  std::printf("%s: %d configs built and correct, %d rejected at instantiation\n",
              template_name.c_str(), built, instantiation_errors);
}

void CheckRandomConfigs(const std::string& template_name, const std::vector<Shape>& shapes,
                        int configs_per_shape, uint64_t seed) {
  std::vector<nlohmann::json> workloads;
  for (const Shape& s : shapes) {
    workloads.push_back({{"M", s.m}, {"N", s.n}, {"K", s.k}, {"layout", s.layout}});
  }
  CheckRandomConfigsOn(template_name, workloads, configs_per_shape, seed);
}

// One config of a conv template: its workload, config and instantiated IR.
struct ConvKernel {
  const Template* tmpl = nullptr;
  std::unique_ptr<Workload> workload;
  Config config;
  std::string ir;  // the body, printed
};
[[nodiscard]] absl::StatusOr<ConvKernel> InstantiateConv(const std::string& template_name,
                                                         const nlohmann::json& args,
                                                         const nlohmann::json& entity) {
  ConvKernel k;
  TF_ASSIGN_OR_RETURN(k.tmpl, FindTemplate(template_name));
  TF_ASSIGN_OR_RETURN(k.workload, MakeWorkload(k.tmpl->workload_name(), args));
  TF_ASSIGN_OR_RETURN(ConfigSpace space, k.tmpl->DefineSpace(*k.workload));
  TF_ASSIGN_OR_RETURN(k.config, space.FromJson({{"entity", entity}}));
  TF_ASSIGN_OR_RETURN(ir::LoweredFunc func, k.tmpl->Instantiate(*k.workload, k.config));
  k.ir = ir::ToString(func.body);
  return k;
}

// One config (its entity) of a conv template for `args`, built for this
// host and run against the reference on inputs from `seed`.
::testing::AssertionResult BuildsAndMatchesReference(const std::string& template_name,
                                                     const nlohmann::json& args,
                                                     const nlohmann::json& entity, uint64_t seed) {
  absl::StatusOr<ConvKernel> k = InstantiateConv(template_name, args, entity);
  if (!k.ok()) {
    return ::testing::AssertionFailure()
           << k.status() << " " << args.dump() << " " << entity.dump();
  }
  BuildResult result = BuildCandidate(*k->tmpl, *k->workload, k->config, HostTarget());
  if (!result.ok()) return ::testing::AssertionFailure() << result.error_msg;
  return RunAndCheck(result.artifact, *k->workload, seed)
         << k->workload->Describe() << " config " << k->config.ToString();
}

// Awkward convolution shapes: odd sizes, stride 2, padding that does not
// divide, asymmetric padding, 1x1 and 7x7 kernels, dilation; each in both
// layouts (NCHWc runs the staged prepare/finish path).
std::vector<nlohmann::json> AwkwardConvShapes(bool with_k) {
  std::vector<nlohmann::json> shapes = {
      {{"N", 1}, {"C", 6}, {"H", 13}, {"W", 11}, {"K", 10}, {"R", 3}, {"S", 3}, {"padding", 1}},
      {{"N", 2},
       {"C", 4},
       {"H", 15},
       {"W", 17},
       {"K", 8},
       {"R", 3},
       {"S", 3},
       {"stride", 2},
       {"padding", {1, 0, 2, 1}}},
      {{"N", 1}, {"C", 16}, {"H", 9}, {"W", 9}, {"K", 12}, {"R", 1}, {"S", 1}, {"stride", 2}},
      {{"N", 2}, {"C", 12}, {"H", 5}, {"W", 7}, {"K", 20}, {"R", 1}, {"S", 1}},
      {{"N", 1},
       {"C", 3},
       {"H", 23},
       {"W", 21},
       {"K", 16},
       {"R", 7},
       {"S", 7},
       {"stride", 2},
       {"padding", 3}},
      {{"N", 1},
       {"C", 8},
       {"H", 12},
       {"W", 10},
       {"K", 6},
       {"R", 3},
       {"S", 2},
       {"dilation", 2},
       {"padding", {2, 1}}},
  };
  std::vector<nlohmann::json> out;
  for (nlohmann::json shape : shapes) {
    if (!with_k) {
      shape["C"] = shape["K"];
      shape.erase("K");
    }
    for (const char* layout : {"NCHW", "NCHWc"}) {
      shape["layout"] = layout;
      out.push_back(shape);
    }
  }
  return out;
}

TEST(BuilderTest, Conv2dNchwcRandomConfigsAreCorrectOnAwkwardShapes) {
  CheckRandomConfigsOn("conv2d_nchwc.x86", AwkwardConvShapes(true), 8, 3);
}

// Grouped convolutions (ResNeXt's 32 groups of 4 channels, two groups
// strided and padded, a depthwise channel multiplier of 2 as 6 groups of
// one input channel): each output channel reads only its group's inputs.
TEST(BuilderTest, GroupedConv2dNchwcRandomConfigsAreCorrect) {
  std::vector<nlohmann::json> shapes;
  for (const char* layout : {"NCHW", "NCHWc"}) {
    shapes.push_back({{"N", 1},
                      {"C", 128},
                      {"H", 9},
                      {"W", 9},
                      {"K", 128},
                      {"R", 3},
                      {"S", 3},
                      {"padding", 1},
                      {"group", 32},
                      {"layout", layout}});
    shapes.push_back({{"N", 2},
                      {"C", 8},
                      {"H", 11},
                      {"W", 7},
                      {"K", 12},
                      {"R", 3},
                      {"S", 3},
                      {"stride", 2},
                      {"padding", {1, 0, 2, 1}},
                      {"group", 2},
                      {"layout", layout}});
    shapes.push_back({{"N", 1},
                      {"C", 6},
                      {"H", 8},
                      {"W", 8},
                      {"K", 12},
                      {"R", 3},
                      {"S", 3},
                      {"padding", 1},
                      {"group", 6},
                      {"layout", layout}});
  }
  CheckRandomConfigsOn("conv2d_nchwc.x86", shapes, 8, 4);
}

// icc_outer with few (batch, output-channel block) pairs cuts the rows into
// bands so the cores share the work: bands that divide the rows (13 rows,
// one channel block: 13 bands of 1, still fewer than 16 items, so each
// row's three tiles go in three parts) and bands that do not (13 rows, two
// blocks: 7 bands of 2, the last half empty) compute the same output.
TEST(BuilderTest, Conv2dIccOuterRowBandsAreCorrect) {
  const nlohmann::json args = {{"N", 1}, {"C", 6}, {"H", 13},      {"W", 11},          {"K", 10},
                               {"R", 3}, {"S", 3}, {"padding", 1}, {"layout", "NCHWc"}};
  for (int64_t tile_oc : {10, 5}) {
    absl::StatusOr<ConvKernel> k = InstantiateConv("conv2d_nchwc.x86", args,
                                                   {{"tile_ic", "ot", 3},
                                                    {"tile_oc", "ot", tile_oc},
                                                    {"tile_ow", "ot", 4},
                                                    {"vec", "ot", 4},
                                                    {"reduce", "ot", "icc_outer_kh_kw_ic"}});
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_NE(k->ir.find(tile_oc == 10 ? "for (blk, 0, 39)" : "for (blk, 0, 14)"),
              std::string::npos)
        << k->ir;
    BuildResult result = BuildCandidate(*k->tmpl, *k->workload, k->config, HostTarget());
    ASSERT_TRUE(result.ok()) << result.error_msg;
    EXPECT_TRUE(RunAndCheck(result.artifact, *k->workload, tile_oc)) << k->config.ToString();
  }
}

// Atrous convolutions whose taps read only the zero padding for most
// pixels (DeepLabV3's rates past half its map; the unpadded orders test
// each tap of a border tile once, Reduction's BorderTaps): rate 6 on a 9x11
// map, rate 4 with stride 2, uneven padding and two images, and rate 9 on
// a 7x7 map, where only the centre tap reads the image; every unpadded
// order, tiles of 3 and 7 columns, both layouts, against the direct
// reference.
TEST(BuilderTest, Conv2dAtrousTapsInThePaddingAreSkippedCorrectly) {
  const std::vector<nlohmann::json> shapes = {
      {{"N", 1},
       {"C", 8},
       {"H", 9},
       {"W", 11},
       {"K", 8},
       {"R", 3},
       {"S", 3},
       {"dilation", 6},
       {"padding", 6}},
      {{"N", 2},
       {"C", 4},
       {"H", 10},
       {"W", 17},
       {"K", 8},
       {"R", 3},
       {"S", 3},
       {"dilation", 4},
       {"padding", {4, 3, 4, 4}},
       {"stride", 2}},
      {{"N", 1},
       {"C", 4},
       {"H", 7},
       {"W", 7},
       {"K", 8},
       {"R", 3},
       {"S", 3},
       {"dilation", 9},
       {"padding", 9}},
  };
  int built = 0;
  for (nlohmann::json args : shapes) {
    for (const char* layout : {"NCHW", "NCHWc"}) {
      args["layout"] = layout;
      for (const char* reduce :
           {"c_kh_kw_ic_inline_pad", "c_kh_ic_kw_inline_pad", "kh_kw_c_ic_inline_pad",
            "icc_outer_kh_kw_ic", "icc_outer_shared_kh_ic_kw"}) {
        for (int64_t tile_ow : {3, 7}) {
          absl::StatusOr<ConvKernel> k = InstantiateConv("conv2d_nchwc.x86", args,
                                                         {{"tile_ic", "ot", 4},
                                                          {"tile_oc", "ot", 8},
                                                          {"tile_ow", "ot", tile_ow},
                                                          {"vec", "ot", 4},
                                                          {"reduce", "ot", reduce}});
          ASSERT_TRUE(k.ok()) << k.status();
          BuildResult result = BuildCandidate(*k->tmpl, *k->workload, k->config, HostTarget());
          ASSERT_TRUE(result.ok()) << result.error_msg;
          ++built;
          EXPECT_TRUE(RunAndCheck(result.artifact, *k->workload, built))
              << k->workload->Describe() << " config " << k->config.ToString();
        }
      }
    }
  }
  EXPECT_EQ(built, 60);
}

// A compiled model's kernel reading its producer's channel blocks as they
// are (the workload's in_block): through the pass that pads or subsamples
// the input, in place where the block is a multiple of tile_ic, through a
// copy into tile_ic's block where it is not, and through Winograd's padded
// input. Grouped (RegNet's 8 channels per group read from 24-channel
// blocks), pointwise, strided and Winograd shapes, checked against the
// reference from NCHW tensors (the prepare stage blocks them by in_block).
TEST(BuilderTest, Conv2dReadsItsInputInAnyChannelBlock) {
  struct Case {
    nlohmann::json args;
    int64_t tile_ic, tile_oc;
    std::vector<const char*> reduces;
    std::vector<int64_t> in_blocks;
  };
  const std::vector<Case> cases = {
      {{{"N", 1},
        {"C", 24},
        {"H", 9},
        {"W", 10},
        {"K", 24},
        {"R", 3},
        {"S", 3},
        {"padding", 1},
        {"group", 3}},
       4,
       8,
       {"c_kh_kw_ic", "c_kh_kw_ic_inline_pad", "icc_outer_kh_ic_kw"},
       {24, 12, 8, 3, 1}},
      {{{"N", 2},
        {"C", 12},
        {"H", 9},
        {"W", 9},
        {"K", 8},
        {"R", 3},
        {"S", 3},
        {"padding", 1},
        {"stride", 2},
        {"group", 2}},
       2,
       4,
       {"c_kh_ic_kw", "kh_kw_c_ic_inline_pad"},
       {12, 6, 4}},
      {{{"N", 1}, {"C", 24}, {"H", 7}, {"W", 7}, {"K", 16}, {"R", 1}, {"S", 1}},
       8,
       8,
       {"icc_outer_shared_kh_kw_ic", "c_kh_kw_ic"},
       {24, 12, 4, 3}},
      {{{"N", 1}, {"C", 16}, {"H", 9}, {"W", 9}, {"K", 8}, {"R", 1}, {"S", 1}, {"stride", 2}},
       8,
       8,
       {"icc_outer_shared_kh_kw_ic"},
       {16, 4}},
      {{{"N", 1}, {"C", 16}, {"H", 8}, {"W", 8}, {"K", 16}, {"R", 3}, {"S", 3}, {"padding", 1}},
       8,
       8,
       {"winograd_f2", "c_kh_kw_ic_inline_pad"},
       {16, 4}},
  };
  int built = 0;
  for (const Case& c : cases) {
    for (const char* reduce : c.reduces) {
      for (int64_t in_block : c.in_blocks) {
        nlohmann::json args = c.args;
        args["layout"] = "NCHWc";
        args["in_block"] = in_block;
        EXPECT_TRUE(BuildsAndMatchesReference("conv2d_nchwc.x86", args,
                                              {{"tile_ic", "ot", c.tile_ic},
                                               {"tile_oc", "ot", c.tile_oc},
                                               {"tile_ow", "ot", 3},
                                               {"vec", "ot", 4},
                                               {"reduce", "ot", reduce}},
                                              ++built));
      }
    }
  }
  EXPECT_EQ(built, 15 + 6 + 8 + 2 + 4);
}

// group_conv2d_nchwc.x86: blocks of whole groups, each lane reducing over
// its own group's input channels (ResNeXt's 4 per group, 4 input and 8
// output channels per group at stride 2 with two images, a depthwise
// convolution written as a grouped one, a dilated one with asymmetric
// padding and blocks of 3 groups, groups of 6 that vectors of 8 lanes
// start inside), every order, blocks of one group
// to all of them, in both layouts and reading inputs blocked by a multiple
// (in place) or a divisor (copied) of its block; each against the direct
// reference.
TEST(BuilderTest, GroupConvBlocksOfWholeGroupsAreCorrect) {
  struct Case {
    nlohmann::json args;
    std::vector<int64_t> tile_ocs;
    std::vector<int64_t> in_blocks;  // 0: the NCHW layout
  };
  const std::vector<Case> cases = {
      {{{"N", 1}, {"C", 32}, {"H", 9}, {"W", 10}, {"K", 32}, {"R", 3}, {"S", 3}, {"group", 8}},
       {4, 16, 32},
       {0, 32, 4}},
      {{{"N", 2},
        {"C", 16},
        {"H", 9},
        {"W", 9},
        {"K", 32},
        {"R", 3},
        {"S", 3},
        {"stride", 2},
        {"group", 4}},
       {8, 16},
       {0, 16, 2}},
      {{{"N", 1}, {"C", 16}, {"H", 7}, {"W", 8}, {"K", 16}, {"R", 3}, {"S", 3}, {"group", 16}},
       {16},
       {16}},
      // Dilated, asymmetric padding, 3 groups (12 channels) per block.
      {{{"N", 1},
        {"C", 24},
        {"H", 11},
        {"W", 10},
        {"K", 24},
        {"R", 3},
        {"S", 3},
        {"dilation", 2},
        {"padding", {1, 2, 2, 1}},
        {"group", 6}},
       {12, 24},
       {0, 24}},
      // Groups of 6: vectors of 8 lanes start inside a group.
      {{{"N", 1}, {"C", 24}, {"H", 6}, {"W", 7}, {"K", 24}, {"R", 3}, {"S", 3}, {"group", 4}},
       {12, 24},
       {24}},
  };
  int built = 0;
  for (const Case& c : cases) {
    for (const char* reduce :
         {"kh_kw_ic_inline_pad", "kh_ic_kw_inline_pad", "kh_kw_ic", "kh_ic_kw"}) {
      for (int64_t tile_oc : c.tile_ocs) {
        for (int64_t in_block : c.in_blocks) {
          nlohmann::json args = c.args;
          if (!args.contains("padding")) args["padding"] = 1;
          args["layout"] = in_block == 0 ? "NCHW" : "NCHWc";
          if (in_block > 0) args["in_block"] = in_block;
          EXPECT_TRUE(BuildsAndMatchesReference("group_conv2d_nchwc.x86", args,
                                                {{"tile_oc", "ot", tile_oc},
                                                 {"tile_ow", "ot", 3},
                                                 {"vec", "ot", 8},
                                                 {"reduce", "ot", reduce}},
                                                ++built));
        }
      }
    }
  }
  EXPECT_EQ(built, 4 * (3 * 3 + 2 * 3 + 1 + 2 * 2 + 2));
}

// "icc_outer_shared_": groups of output-channel blocks reducing each input
// chunk in turn (OcShare) over chunks of input-channel blocks (IccChunk),
// on a pointwise convolution (its 8 blocks in one group, its 16 input
// blocks in chunks), a strided one (gathered, joined), a grouped one (the
// group's 2 blocks), a padded 3x3 with two images, in both layouts; each
// against the direct reference.
TEST(BuilderTest, Conv2dIccOuterSharedIsCorrect) {
  const std::vector<nlohmann::json> shapes = {
      {{"N", 1}, {"C", 64}, {"H", 7}, {"W", 9}, {"K", 32}, {"R", 1}, {"S", 1}},
      {{"N", 1}, {"C", 32}, {"H", 9}, {"W", 8}, {"K", 16}, {"R", 1}, {"S", 1}, {"stride", 2}},
      {{"N", 1}, {"C", 16}, {"H", 6}, {"W", 6}, {"K", 32}, {"R", 1}, {"S", 1}, {"group", 2}},
      {{"N", 2}, {"C", 8}, {"H", 11}, {"W", 10}, {"K", 12}, {"R", 3}, {"S", 3}, {"padding", 1}},
  };
  int built = 0;
  for (nlohmann::json args : shapes) {
    const int64_t groups = args.value("group", int64_t{1});
    const int64_t ic = args["C"].get<int64_t>() / groups >= 4 ? 4 : 2;
    for (const char* layout : {"NCHW", "NCHWc"}) {
      args["layout"] = layout;
      absl::StatusOr<ConvKernel> k =
          InstantiateConv("conv2d_nchwc.x86", args,
                          {{"tile_ic", "ot", ic},
                           {"tile_oc", "ot", 4},
                           {"tile_ow", "ot", 3},
                           {"vec", "ot", 4},
                           {"reduce", "ot", "icc_outer_shared_kh_kw_ic"}});
      ASSERT_TRUE(k.ok()) << args.dump() << ": " << k.status();
      BuildResult result = BuildCandidate(*k->tmpl, *k->workload, k->config, HostTarget());
      ASSERT_TRUE(result.ok()) << args.dump() << ": " << result.error_msg;
      ++built;
      EXPECT_TRUE(RunAndCheck(result.artifact, *k->workload, 20 + built))
          << args.dump() << " " << k->config.ToString();
      if (built == 1) {  // the pointwise one: its 8 output blocks in one group
        EXPECT_NE(k->ir.find("for (ocs, 0, 8)"), std::string::npos) << k->ir;
      }
    }
  }
  EXPECT_EQ(built, 8);
}

// Winograd's F(2x2, 3x3) and F(4x4, 3x3) (the "winograd_f2"/"winograd_f4"
// reduce values of 3x3 stride-1 convolutions): outputs the tiles do not
// divide (13 x 11, 7 x 7, 5 x 6), asymmetric and no padding, two images,
// channel blocks the vector does not divide, register tiles wider than the
// tiles there are, both layouts; each against the direct reference.
TEST(BuilderTest, Conv2dWinogradConfigsAreCorrect) {
  const std::vector<nlohmann::json> shapes = {
      {{"N", 2}, {"C", 6}, {"H", 13}, {"W", 11}, {"K", 10}, {"padding", 1}},
      {{"N", 1}, {"C", 8}, {"H", 9}, {"W", 10}, {"K", 16}, {"padding", {1, 0, 2, 1}}},
      {{"N", 1}, {"C", 16}, {"H", 9}, {"W", 9}, {"K", 8}, {"padding", 0}},
      {{"N", 1}, {"C", 4}, {"H", 5}, {"W", 6}, {"K", 12}, {"padding", 1}},
  };
  struct Blocks {
    int64_t ic, oc, ow, vec;
  };
  int built = 0;
  for (nlohmann::json args : shapes) {
    args["R"] = 3;
    args["S"] = 3;
    const int64_t c = args["C"], k = args["K"];
    const std::vector<Blocks> blocks = {{c, k, 4, 8}, {c / 2, k / 2, 3, 4}, {2, k, 6, 8}};
    for (const char* layout : {"NCHW", "NCHWc"}) {
      args["layout"] = layout;
      for (const char* reduce : {"winograd_f2", "winograd_f4"}) {
        for (const Blocks& b : blocks) {
          absl::StatusOr<ConvKernel> kernel = InstantiateConv("conv2d_nchwc.x86", args,
                                                              {{"tile_ic", "ot", b.ic},
                                                               {"tile_oc", "ot", b.oc},
                                                               {"tile_ow", "ot", b.ow},
                                                               {"vec", "ot", b.vec},
                                                               {"reduce", "ot", reduce}});
          ASSERT_TRUE(kernel.ok()) << args.dump() << " " << reduce << ": " << kernel.status();
          BuildResult result =
              BuildCandidate(*kernel->tmpl, *kernel->workload, kernel->config, HostTarget());
          if (result.error_no == MeasureErrorNo::kInstantiationError) continue;  // tile too big
          ASSERT_TRUE(result.ok()) << result.error_msg;
          ++built;
          EXPECT_TRUE(RunAndCheck(result.artifact, *kernel->workload, built))
              << args.dump() << " " << kernel->config.ToString();
        }
      }
    }
  }
  EXPECT_GE(built, 40);
  // Not a 3x3 stride-1 convolution: no Winograd choice in its space.
  absl::StatusOr<ConvKernel> strided = InstantiateConv(
      "conv2d_nchwc.x86",
      {{"N", 1}, {"C", 4}, {"H", 9}, {"W", 9}, {"K", 4}, {"R", 3}, {"S", 3}, {"stride", 2}},
      {{"tile_ic", "ot", 4},
       {"tile_oc", "ot", 4},
       {"tile_ow", "ot", 4},
       {"vec", "ot", 4},
       {"reduce", "ot", "winograd_f4"}});
  EXPECT_FALSE(strided.ok());
}

// Channel blocks the vector width does not divide (ShuffleNet's 116 and 58
// channels, in blocks of 29 and 58) end each row of the register tile with
// one narrower vector (8 + 8 + 8 + 5 lanes; 7 x 8 + 2) instead of falling
// back to vectors of gcd(vec, block) lanes; conv and depthwise alike. The
// tiles this host's registers cannot hold (58 channels' 8 vectors a column
// on AVX2's 16) are left out: the builder refuses them (register_fit.h).
TEST(BuilderTest, BlocksTheVectorDoesNotDivideEndInANarrowerVector) {
  struct Case {
    std::string template_name;
    nlohmann::json args, entity;
    int64_t block;  // the vectorized channel block
    int64_t width;  // the register tile's columns: tile_ow's cut of the row
  };
  const nlohmann::json conv = {{"N", 1},  {"C", 24}, {"H", 7}, {"W", 9},
                               {"K", 58}, {"R", 3},  {"S", 3}, {"padding", 1}};
  const nlohmann::json dw = {{"N", 1}, {"C", 58}, {"H", 9},      {"W", 7},
                             {"R", 3}, {"S", 3},  {"stride", 2}, {"padding", 1}};
  std::vector<Case> cases;
  for (int64_t tile_oc : {29, 58}) {
    for (int64_t tile_ow : {4, 2}) {
      for (const char* reduce : {"c_kh_kw_ic", "icc_outer_kh_ic_kw"}) {
        cases.push_back({"conv2d_nchwc.x86",
                         conv,
                         {{"tile_ic", "ot", 8},
                          {"tile_oc", "ot", tile_oc},
                          {"tile_ow", "ot", tile_ow},
                          {"vec", "ot", 8},
                          {"reduce", "ot", reduce}},
                         tile_oc,
                         tile_ow == 4 ? 3 : 2});  // 9 columns as 3 x 3 or 4 x 2 + 1
      }
    }
  }
  for (int64_t tile_ow : {4, 2}) {
    cases.push_back({"depthwise_conv2d_nchwc.x86",
                     dw,
                     {{"tile_c", "ot", 29},
                      {"tile_ow", "ot", tile_ow},
                      {"vec", "ot", 8},
                      {"unroll_kw", "ot", 1}},
                     29,
                     tile_ow});
  }
  const TargetSpec host = HostTarget();
  int built = 0;
  for (const Case& c : cases) {
    for (const char* layout : {"NCHW", "NCHWc"}) {
      nlohmann::json args = c.args;
      args["layout"] = layout;
      absl::StatusOr<ConvKernel> k = InstantiateConv(c.template_name, args, c.entity);
      ASSERT_TRUE(k.ok()) << k.status();
      const std::string where = args.dump() + " " + k->config.ToString();
      absl::StatusOr<RegisterDemand> demand = k->tmpl->RegisterDemandOf(*k->workload, k->config);
      ASSERT_TRUE(demand.ok()) << demand.status();
      EXPECT_EQ(demand->lanes, 8) << where;
      EXPECT_EQ(demand->accumulators, c.width * ((c.block + 7) / 8)) << where;
      BuildResult result = BuildCandidate(*k->tmpl, *k->workload, k->config, host);
      if (!CountRegisters(*demand, host).fits()) {
        EXPECT_EQ(result.error_no, MeasureErrorNo::kInstantiationError) << where;
        continue;
      }
      ASSERT_TRUE(result.ok()) << result.error_msg;
      EXPECT_TRUE(RunAndCheck(result.artifact, *k->workload, 5)) << where;
      ++built;
    }
  }
  // 29 channels in 2-column tiles fit any x86 host (13 of 16 registers).
  EXPECT_GE(built, 6);
}

// A tile width that does not divide the row (14 columns in tiles of at most
// 4) cuts it into as few tiles, as even as they can be (4, 4, 3 and 3),
// instead of computing into padding (four tiles of 4): two tiles of 4 in one
// loop, two of 3 in another, and the same output whether the input is
// padded first, read unpadded or walked by input-channel block, at stride 1
// in the blocked layout and at stride 2 in NCHW.
TEST(BuilderTest, ConvRowsSplitIntoEvenTilesWhereTileOwDoesNotDivide) {
  const std::vector<nlohmann::json> shapes = {{{"N", 1},
                                               {"C", 8},
                                               {"H", 9},
                                               {"W", 14},
                                               {"K", 16},
                                               {"R", 3},
                                               {"S", 3},
                                               {"padding", 1},
                                               {"layout", "NCHWc"}},
                                              {{"N", 1},
                                               {"C", 8},
                                               {"H", 17},
                                               {"W", 27},
                                               {"K", 16},
                                               {"R", 3},
                                               {"S", 3},
                                               {"stride", 2},
                                               {"padding", 1},
                                               {"layout", "NCHW"}}};
  struct Case {
    std::string template_name;
    nlohmann::json entity;
  };
  std::vector<Case> cases;
  for (const char* reduce : {"c_kh_kw_ic", "c_kh_ic_kw_inline_pad", "icc_outer_kh_ic_kw"}) {
    cases.push_back({"conv2d_nchwc.x86",
                     {{"tile_ic", "ot", 4},
                      {"tile_oc", "ot", 8},
                      {"tile_ow", "ot", 4},
                      {"vec", "ot", 8},
                      {"reduce", "ot", reduce}}});
  }
  cases.push_back(
      {"depthwise_conv2d_nchwc.x86",
       {{"tile_c", "ot", 8}, {"tile_ow", "ot", 4}, {"vec", "ot", 8}, {"unroll_kw", "ot", 1}}});
  for (const nlohmann::json& shape : shapes) {
    for (const Case& c : cases) {
      nlohmann::json args = shape;
      if (c.template_name != "conv2d_nchwc.x86") {
        args.erase("K");
        args["C"] = 16;
      }
      absl::StatusOr<ConvKernel> k = InstantiateConv(c.template_name, args, c.entity);
      ASSERT_TRUE(k.ok()) << k.status();
      const std::string where = shape.dump() + " " + k->config.ToString();
      EXPECT_NE(k->ir.find("for (owc, 0, 2)"), std::string::npos) << where;
      EXPECT_NE(k->ir.find("for (owcn, 0, 2)"), std::string::npos) << where;
      EXPECT_EQ(k->ir.find("for (owc, 0, 4)"), std::string::npos) << where;
      BuildResult result = BuildCandidate(*k->tmpl, *k->workload, k->config, HostTarget());
      ASSERT_TRUE(result.ok()) << result.error_msg;
      EXPECT_TRUE(RunAndCheck(result.artifact, *k->workload, 7)) << where;
    }
  }
}

// A pointwise convolution's image is tiled as one row (TiledConvShape); with
// two channel blocks (2 items), its tiles are split into parts for the
// cores, to at least 16 items: 49 columns by at most 3 are fifteen tiles of
// 3 and two of 2, in nine parts of two (the eighth holds a full and a
// narrow tile, the last one tile behind a guard); by 2, twenty-four tiles
// of 2 and one of 1 in nine parts of three; by 7, seven parts of one tile
// (fewer tiles than the 8 parts asked for). Depthwise splits to at least
// the 14 items its 7 rows gave: by 3, nine parts of two.
TEST(BuilderTest, PointwiseConvTilesItsImageAsOneRowSplitIntoParts) {
  struct Case {
    std::string template_name;
    nlohmann::json entity;
    std::string parallel_loop, tile_loop;
  };
  auto conv = [](int64_t tile_ow, const char* reduce) {
    return nlohmann::json{{"tile_ic", "ot", 4},
                          {"tile_oc", "ot", 8},
                          {"tile_ow", "ot", tile_ow},
                          {"vec", "ot", 8},
                          {"reduce", "ot", reduce}};
  };
  std::vector<Case> cases;
  for (const char* reduce : {"c_kh_kw_ic", "icc_outer_kh_kw_ic"}) {
    cases.push_back({"conv2d_nchwc.x86", conv(3, reduce), "for (blk, 0, 18)", "for (owc, 0, 2)"});
    cases.push_back({"conv2d_nchwc.x86", conv(2, reduce), "for (blk, 0, 18)", "for (owc, 0, 3)"});
    cases.push_back({"conv2d_nchwc.x86", conv(7, reduce), "for (blk, 0, 14)", ""});
  }
  cases.push_back(
      {"depthwise_conv2d_nchwc.x86",
       {{"tile_c", "ot", 8}, {"tile_ow", "ot", 3}, {"vec", "ot", 8}, {"unroll_kw", "ot", 0}},
       "for (blk, 0, 18)",
       "for (owc, 0, 2)"});
  for (const char* layout : {"NCHW", "NCHWc"}) {
    for (const Case& c : cases) {
      nlohmann::json args = {{"N", 1}, {"C", 8}, {"H", 7},          {"W", 7},
                             {"R", 1}, {"S", 1}, {"layout", layout}};
      if (c.template_name == "conv2d_nchwc.x86") {
        args["K"] = 16;
      } else {
        args["C"] = 16;
      }
      absl::StatusOr<ConvKernel> k = InstantiateConv(c.template_name, args, c.entity);
      ASSERT_TRUE(k.ok()) << k.status();
      const std::string where = args.dump() + " " + k->config.ToString();
      EXPECT_NE(k->ir.find(c.parallel_loop), std::string::npos) << where << "\n" << k->ir;
      if (!c.tile_loop.empty()) {
        EXPECT_NE(k->ir.find(c.tile_loop), std::string::npos) << where;
      }
      BuildResult result = BuildCandidate(*k->tmpl, *k->workload, k->config, HostTarget());
      ASSERT_TRUE(result.ok()) << result.error_msg;
      EXPECT_TRUE(RunAndCheck(result.artifact, *k->workload, 11)) << where;
    }
  }
}

TEST(BuilderTest, DepthwiseConv2dNchwcRandomConfigsAreCorrectOnAwkwardShapes) {
  CheckRandomConfigsOn("depthwise_conv2d_nchwc.x86", AwkwardConvShapes(false), 8, 4);
}

TEST(BuilderTest, BatchMatmulPackRandomConfigsAreCorrectOnRaggedShapes) {
  CheckRandomConfigsOn("batch_matmul_pack.x86",
                       {{{"B", 3}, {"M", 17}, {"N", 29}, {"K", 13}, {"layout", "NK"}},
                        {{"B", 2}, {"M", 33}, {"N", 18}, {"K", 40}, {"layout", "KN"}},
                        {{"B", 5}, {"M", 1}, {"N", 24}, {"K", 16}, {"layout", "NK"}}},
                       20, 5);
}

TEST(BuilderTest, DensePackRandomConfigsAreCorrectOnRaggedShapes) {
  CheckRandomConfigs("dense_pack.x86",
                     {{37, 53, 29, "NK"},
                      {19, 41, 67, "KN"},
                      {1, 70, 33, "NK"},
                      {50, 17, 130, "KN"},
                      {13, 100, 9, "NK"},
                      {64, 48, 64, "KN"}},
                     55, 1);
}

TEST(BuilderTest, DenseGemmRandomConfigsAreCorrectOnRaggedShapes) {
  // Both layouts, M = 1 and small M, tails of k shorter than a vector: the
  // dot kernel, B packed per call and B packed once in the staged prepare.
  CheckRandomConfigs("dense_gemm.x86",
                     {{37, 53, 29, "NK"},
                      {19, 41, 67, "KN"},
                      {1, 70, 33, "NK"},
                      {16, 96, 130, "NK"},
                      {13, 100, 9, "NK"},
                      {64, 48, 64, "KN"}},
                     55, 6);
}

TEST(BuilderTest, DenseTiledRandomConfigsAreCorrect) {
  CheckRandomConfigs("dense_tiled",
                     {{36, 60, 29, "NK"},
                      {24, 40, 17, "KN"},
                      {30, 42, 11, "NK"},
                      {48, 20, 7, "KN"},
                      {12, 90, 13, "NK"},
                      {60, 60, 5, "KN"}},
                     52, 2);
}

TEST(BuilderTest, VectorWiderThanTargetIsInstantiationError) {
  auto tmpl = FindTemplate("dense_pack.x86");
  ASSERT_TRUE(tmpl.ok());
  auto workload = MakeWorkload("dense", {{"M", 8}, {"N", 32}, {"K", 8}});
  ASSERT_TRUE(workload.ok());
  auto space = (*tmpl)->DefineSpace(**workload);
  ASSERT_TRUE(space.ok());
  auto config = space->FromJson({{"entity",
                                  {{"vec", "ot", 16},
                                   {"nr_vecs", "ot", 1},
                                   {"mr", "ot", 2},
                                   {"kc", "ot", 8},
                                   {"mc_panels", "ot", 1},
                                   {"nc_panels", "ot", 1},
                                   {"unroll_k", "ot", 1},
                                   {"pack_a", "ot", 0},
                                   {"order", "ot", "nm"},
                                   {"fuse", "ot", "mn"}}}});
  ASSERT_TRUE(config.ok()) << config.status();
  auto avx2 = ParseTarget("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell");
  ASSERT_TRUE(avx2.ok());
  BuildResult result = BuildCandidate(**tmpl, **workload, *config, *avx2);
  EXPECT_EQ(result.error_no, MeasureErrorNo::kInstantiationError);
  // Refused before code generation (register_fit.h), naming the widths.
  EXPECT_NE(result.error_msg.find("vectors of 16 lanes (512 bits) are wider than target"),
            std::string::npos)
      << result.error_msg;
  EXPECT_NE(result.error_msg.find("at most 256 bits"), std::string::npos) << result.error_msg;
  EXPECT_EQ(result.timings.codegen_seconds, 0);
}

TEST(BuilderTest, ArtifactCarriesTargetEntryAndHash) {
  auto tmpl = FindTemplate("dense_tiled");
  ASSERT_TRUE(tmpl.ok());
  auto workload = MakeWorkload("dense", {{"M", 4}, {"N", 4}, {"K", 4}});
  ASSERT_TRUE(workload.ok());
  auto space = (*tmpl)->DefineSpace(**workload);
  ASSERT_TRUE(space.ok());
  BuildResult a = BuildCandidate(**tmpl, **workload, *space->Get(0), HostTarget());
  BuildResult b = BuildCandidate(**tmpl, **workload, *space->Get(1), HostTarget());
  ASSERT_TRUE(a.ok()) << a.error_msg;
  ASSERT_TRUE(b.ok()) << b.error_msg;
  EXPECT_EQ(a.artifact.entry_name, "tf_dense_tiled");
  EXPECT_EQ(a.artifact.hash.size(), 64u);
  // The fleet's one SHA-256 (lowercase hex), which the agent checks artifacts with.
  EXPECT_EQ(a.artifact.hash, Sha256Hex(a.artifact.shared_object));
  EXPECT_NE(a.artifact.hash, b.artifact.hash);
  EXPECT_GT(a.timings.total_seconds, 0.0);
}

// The test-only fault template (//tests:dense_fault_test_template, linked in):
// all three configs compile for plain "llvm"; only "none" is run here (segv
// and hang would take the test process down or never return). The faults
// must survive optimisation: the out-of-bounds store and the endless loop
// are still in the optimised LLVM IR.
TEST(BuilderTest, DenseFaultTestTemplateConfigsCompile) {
  auto tmpl = FindTemplate("dense_fault.test");
  ASSERT_TRUE(tmpl.ok()) << tmpl.status();
  auto target = ParseTarget("llvm");
  ASSERT_TRUE(target.ok()) << target.status();
  BuildOptions options;
  options.keep_llvm_ir = true;
  for (const Shape& s : std::vector<Shape>{{13, 7, 5, "NK"}, {6, 11, 9, "KN"}}) {
    auto workload =
        MakeWorkload("dense", {{"M", s.m}, {"N", s.n}, {"K", s.k}, {"layout", s.layout}});
    ASSERT_TRUE(workload.ok()) << workload.status();
    auto space = (*tmpl)->DefineSpace(**workload);
    ASSERT_TRUE(space.ok()) << space.status();
    ASSERT_EQ(space->size(), 3);
    for (int64_t i = 0; i < space->size(); ++i) {
      auto config = space->Get(i);
      ASSERT_TRUE(config.ok()) << config.status();
      const std::string fault = *config->GetString("fault");
      BuildResult result = BuildCandidate(**tmpl, **workload, *config, *target, options);
      ASSERT_TRUE(result.ok()) << fault << ": " << MeasureErrorName(result.error_no) << ": "
                               << result.error_msg;
      EXPECT_EQ(result.artifact.entry_name, "tf_dense_fault_test");
      EXPECT_FALSE(result.artifact.shared_object.empty());
      // 1 << 40 elements (or 4 << 40 bytes) for segv; the 1 << 40 trip count for hang.
      const bool has_fault_constant = result.llvm_ir.find("1099511627776") != std::string::npos ||
                                      result.llvm_ir.find("4398046511104") != std::string::npos;
      EXPECT_EQ(has_fault_constant, fault != "none") << fault << "\n" << result.llvm_ir;
      if (fault == "none") {
        EXPECT_TRUE(RunAndCheck(result.artifact, **workload, 7)) << (*workload)->Describe();
      }
    }
  }
}

}  // namespace
}  // namespace tunefleet

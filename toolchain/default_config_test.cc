// The default config's register tile follows the target's vector
// registers: two vectors of output channels by about 6 columns where there
// are 16 (AVX2), one vector by about 8 where there are 32 (AVX-512), input
// blocks as output blocks, and DefaultTile::kOneVector the narrow choice
// anywhere.
#include "toolchain/default_config.h"

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "toolchain/codegen/target.h"

namespace tunefleet {
namespace {

const char kAvx2[] = "llvm -mcpu=znver1";
const char kAvx512[] = "llvm -mcpu=skylake-avx512";

// ResNet's 3x3 convolution of 64 channels at 56x56.
nlohmann::json Conv64() {
  return {{"N", 1},         {"C", 64},      {"H", 56},       {"W", 56},
          {"K", 64},        {"R", 3},       {"S", 3},        {"stride_h", 1},
          {"stride_w", 1},  {"pad_top", 1}, {"pad_left", 1}, {"pad_bottom", 1},
          {"pad_right", 1}, {"dil_h", 1},   {"dil_w", 1},    {"layout", "NCHWc"}};
}

std::map<std::string, nlohmann::json> Knobs(const std::string& target, DefaultTile tile,
                                            const nlohmann::json& args = Conv64()) {
  std::unique_ptr<Task> task = Task::Make("", "conv2d_nchw", args, target).value();
  const int lanes = TargetVectorLanes(ParseTarget(target).value());
  absl::StatusOr<Config> config = DefaultConfig(*task, lanes, tile);
  EXPECT_TRUE(config.ok()) << config.status();
  std::map<std::string, nlohmann::json> knobs;
  if (!config.ok()) return knobs;
  const nlohmann::json json = config->ToJson();
  for (const nlohmann::json& knob : json["entity"]) knobs[knob[0].get<std::string>()] = knob[2];
  return knobs;
}

TEST(DefaultConfigTest, SixteenRegistersGetTwoVectorBlocksAndAboutSixColumns) {
  auto knobs = Knobs(kAvx2, DefaultTile::kTarget);
  EXPECT_EQ(knobs["tile_oc"], 16);
  EXPECT_EQ(knobs["tile_ic"], 16);
  EXPECT_EQ(knobs["vec"], 8);
  EXPECT_GE(knobs["tile_ow"].get<int>(), 4);
  EXPECT_LE(knobs["tile_ow"].get<int>(), 8);
}

// Winograd's F(4x4, 3x3) where there are tiles and channels enough
// (winograd.h: WinogradDefaultTile), F(2x2, 3x3) on a 7x7 or 8x8 output
// with 128 or more input and output channels, the direct first order
// elsewhere: a 7x7 output of 64 channels, or of 32 from 128, a strided
// convolution, 3 input channels.
TEST(DefaultConfigTest, LargeThreeByThreeConvolutionsDefaultToWinograd) {
  for (const char* target : {kAvx2, kAvx512}) {
    EXPECT_EQ(Knobs(target, DefaultTile::kTarget)["reduce"], "winograd_f4") << target;
    nlohmann::json small = Conv64();
    small["H"] = small["W"] = 7;
    EXPECT_EQ(Knobs(target, DefaultTile::kTarget, small)["reduce"], "icc_outer_kh_ic_kw") << target;
    for (int side : {7, 8}) {
      nlohmann::json deep = small;
      deep["H"] = deep["W"] = side;
      deep["C"] = deep["K"] = 256;
      EXPECT_EQ(Knobs(target, DefaultTile::kTarget, deep)["reduce"], "winograd_f2")
          << target << " " << side;
    }
    nlohmann::json narrow_out = small;
    narrow_out["C"] = 128;
    narrow_out["K"] = 32;
    EXPECT_EQ(Knobs(target, DefaultTile::kTarget, narrow_out)["reduce"], "icc_outer_kh_ic_kw")
        << target;
    nlohmann::json strided = Conv64();
    strided["stride_h"] = strided["stride_w"] = 2;
    EXPECT_EQ(Knobs(target, DefaultTile::kTarget, strided)["reduce"], "c_kh_kw_ic") << target;
    nlohmann::json rgb = Conv64();
    rgb["C"] = 3;
    EXPECT_EQ(Knobs(target, DefaultTile::kTarget, rgb)["reduce"], "c_kh_kw_ic") << target;
  }
}

// A stride-1 convolution where a tenth or more of the (pixel, tap) pairs
// read the padding reads its input unpadded by default (no padded copy,
// those taps skipped): atrous rates 4 and 24 on 28x28, a 3x3 on a 7x7 map;
// rate 2 on 28x28 (9 % in the padding), a strided one and a grouped one
// keep the padded order.
TEST(DefaultConfigTest, ConvolutionsReadingMuchPaddingReadTheirInputUnpadded) {
  auto atrous = [](int rate) {
    nlohmann::json args = Conv64();
    args["H"] = args["W"] = 28;
    for (const char* key : {"pad_top", "pad_left", "pad_bottom", "pad_right", "dil_h", "dil_w"}) {
      args[key] = rate;
    }
    return args;
  };
  nlohmann::json small = Conv64();
  small["H"] = small["W"] = 7;
  nlohmann::json strided = atrous(24);
  strided["stride_h"] = strided["stride_w"] = 2;
  nlohmann::json grouped = atrous(24);
  grouped["group"] = 2;
  for (const char* target : {kAvx2, kAvx512}) {
    for (const nlohmann::json& args : {atrous(4), atrous(24), small}) {
      EXPECT_EQ(Knobs(target, DefaultTile::kTarget, args)["reduce"], "icc_outer_kh_ic_kw")
          << target << " " << args.dump();
    }
    for (const nlohmann::json& args : {atrous(2), strided, grouped}) {
      EXPECT_EQ(Knobs(target, DefaultTile::kTarget, args)["reduce"], "c_kh_kw_ic")
          << target << " " << args.dump();
    }
  }
}

// A 1x1 convolution, strided or not, shares each input chunk among groups
// of output-channel blocks by default; others keep their order.
TEST(DefaultConfigTest, PointwiseConvolutionsDefaultToTheSharedOrder) {
  for (const char* target : {kAvx2, kAvx512}) {
    nlohmann::json pointwise = Conv64();
    pointwise["R"] = pointwise["S"] = 1;
    pointwise["pad_top"] = pointwise["pad_left"] = pointwise["pad_bottom"] =
        pointwise["pad_right"] = 0;
    pointwise["C"] = 256;
    EXPECT_EQ(Knobs(target, DefaultTile::kTarget, pointwise)["reduce"], "icc_outer_shared_kh_kw_ic")
        << target;
    pointwise["stride_h"] = pointwise["stride_w"] = 2;
    EXPECT_EQ(Knobs(target, DefaultTile::kTarget, pointwise)["reduce"], "icc_outer_shared_kh_kw_ic")
        << target;
    nlohmann::json strided = Conv64();
    strided["stride_h"] = strided["stride_w"] = 2;
    EXPECT_EQ(Knobs(target, DefaultTile::kTarget, strided)["reduce"], "c_kh_kw_ic") << target;
  }
}

// ResNeXt's grouped 3x3 (32 groups of 4 channels) gets blocks of whole
// groups: one vector of 16 channels by about 12 columns on AVX-512, two
// vectors of 8 by about 6 on AVX2, the kernel-width loop innermost and the
// input read unpadded.
TEST(DefaultConfigTest, BlocksOfWholeGroupsGetTheirOwnTileAndOrder) {
  nlohmann::json args = Conv64();
  args["C"] = 128;
  args["K"] = 128;
  args["group"] = 32;
  auto wide = Knobs(kAvx512, DefaultTile::kTarget, args);
  EXPECT_EQ(wide["tile_oc"], 16);
  EXPECT_EQ(wide["vec"], 16);
  EXPECT_EQ(wide["reduce"], "kh_ic_kw_inline_pad");
  EXPECT_GE(wide["tile_ow"].get<int>(), 10);
  EXPECT_LE(wide["tile_ow"].get<int>(), 14);
  auto avx2 = Knobs(kAvx2, DefaultTile::kTarget, args);
  EXPECT_EQ(avx2["tile_oc"], 16);
  EXPECT_EQ(avx2["vec"], 8);
  EXPECT_EQ(avx2["reduce"], "kh_ic_kw_inline_pad");
  EXPECT_LE(avx2["tile_ow"].get<int>(), 8);
}

TEST(DefaultConfigTest, OneVectorOnSixteenRegistersIsTheNarrowBlock) {
  auto knobs = Knobs(kAvx2, DefaultTile::kOneVector);
  EXPECT_EQ(knobs["tile_oc"], 8);
  EXPECT_EQ(knobs["tile_ic"], 8);
}

TEST(DefaultConfigTest, ThirtyTwoRegistersKeepOneVectorBlocks) {
  for (DefaultTile tile : {DefaultTile::kTarget, DefaultTile::kOneVector}) {
    auto knobs = Knobs(kAvx512, tile);
    EXPECT_EQ(knobs["tile_oc"], 16);
    EXPECT_EQ(knobs["tile_ic"], 16);
    EXPECT_EQ(knobs["vec"], 16);
  }
}

TEST(DefaultConfigTest, TilesDifferOnlyWithSixteenRegisters) {
  EXPECT_TRUE(DefaultTilesDiffer(ParseTarget(kAvx2).value()));
  EXPECT_FALSE(DefaultTilesDiffer(ParseTarget(kAvx512).value()));
}

// 440 channels (RegNet's): no block of 16 divides them; the input block is
// scored as the output block, so a layer reads what the one before writes.
TEST(DefaultConfigTest, InputAndOutputBlocksAgreeWhereNoWholeVectorsDivide) {
  nlohmann::json args = Conv64();
  args["C"] = 440;
  args["K"] = 440;
  args["R"] = 1;
  args["S"] = 1;
  args["pad_top"] = args["pad_left"] = args["pad_bottom"] = args["pad_right"] = 0;
  args["H"] = args["W"] = 7;
  auto knobs = Knobs(kAvx2, DefaultTile::kTarget, args);
  EXPECT_EQ(knobs["tile_oc"], knobs["tile_ic"]);
}

std::string DenseTaskOrder(int64_t m, int64_t n, int64_t k) {
  std::unique_ptr<Task> task =
      Task::Make("", "dense", {{"M", m}, {"N", n}, {"K", k}, {"layout", "NK"}}, kAvx2).value();
  absl::StatusOr<Config> config = DefaultConfig(*task, 8);
  EXPECT_TRUE(config.ok()) << config.status();
  if (!config.ok()) return "";
  return config->GetString("fuse").value();
}

// A GEMM's tasks walk the dimension that keeps the operand read again and
// again the smaller one: ViT-B's layers (A of 197 tokens, weights of 9 MiB)
// and Swin-T's last MLP (49 tokens) walk M; Swin-T's first layers (3136
// tokens, weights of 144 KiB, cached anyway) walk N. Each of those measured
// faster that way on a Zen 1 (bench/results/compile_ab_gemm_task_order_zen1.log).
TEST(DefaultConfigTest, GemmTasksWalkTheDimensionThatRereadsLessMemory) {
  EXPECT_EQ(DenseTaskOrder(197, 3072, 768), "nm");
  EXPECT_EQ(DenseTaskOrder(197, 768, 3072), "nm");
  EXPECT_EQ(DenseTaskOrder(49, 3072, 768), "nm");
  EXPECT_EQ(DenseTaskOrder(3136, 384, 96), "mn");
  EXPECT_EQ(DenseTaskOrder(128, 512, 128), "mn");  // both cached: the first choice
}

}  // namespace
}  // namespace tunefleet

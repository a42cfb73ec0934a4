#include "tuner_core/workloads/depthwise_conv2d.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tuner_core/workloads/workload_test_util.h"

namespace tunefleet {
namespace {

using nlohmann::json;

using workload_test::BadArgsCase;
using workload_test::ConvShape;
using workload_test::With;
using workload_test::Without;

json Array(std::vector<int64_t> v) { return json(v); }

json Base() { return {{"N", 1}, {"C", 8}, {"H", 10}, {"W", 10}, {"R", 3}, {"S", 3}}; }

std::unique_ptr<DepthwiseConv2dWorkload> MakeOk(const json& args) {
  return workload_test::MakeOk<DepthwiseConv2dWorkload>(args);
}

TEST(DepthwiseConv2dWorkloadTest, CanonicalArgsHaveNoK) {
  auto w = MakeOk(Base());
  ASSERT_NE(w, nullptr);
  const json expected = {{"N", 1},       {"C", 8},        {"H", 10},         {"W", 10},
                         {"R", 3},       {"S", 3},        {"stride_h", 1},   {"stride_w", 1},
                         {"pad_top", 0}, {"pad_left", 0}, {"pad_bottom", 0}, {"pad_right", 0},
                         {"dil_h", 1},   {"dil_w", 1},    {"layout", "NCHW"}};
  EXPECT_EQ(w->args(), expected);
  EXPECT_EQ(w->name(), "depthwise_conv2d_nchw");
  auto again = MakeOk(w->args());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->args(), w->args());
}

TEST(DepthwiseConv2dWorkloadTest, ShorthandsAndLayoutAreParsedLikeConv2d) {
  auto w = MakeOk(With(Base(), {{"stride", Array({2, 1})},
                                {"padding", Array({0, 1, 2, 1})},
                                {"dilation", 2},
                                {"layout", "NCHWc"}}));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->stride_h(), 2);
  EXPECT_EQ(w->stride_w(), 1);
  EXPECT_EQ(w->pad_top(), 0);
  EXPECT_EQ(w->pad_left(), 1);
  EXPECT_EQ(w->pad_bottom(), 2);
  EXPECT_EQ(w->pad_right(), 1);
  EXPECT_EQ(w->dil_h(), 2);
  EXPECT_EQ(w->dil_w(), 2);
  EXPECT_TRUE(w->layout_nchwc());
  EXPECT_FALSE(w->args().contains("stride"));
  EXPECT_EQ(w->args()["layout"], "NCHWc");
  // Extent 5 on both axes: (10+2-5)/2+1 rows, (10+2-5)/1+1 columns.
  EXPECT_EQ(w->out_h(), 4);
  EXPECT_EQ(w->out_w(), 8);
}

TEST(DepthwiseConv2dWorkloadTest, BadArgumentsAreInvalidArgumentNamingTheKey) {
  const BadArgsCase cases[] = {
      {With(Base(), {{"K", 8}}),
       "unknown argument \"K\" (accepted: N, C, H, W, R, S, stride_h, stride_w, pad_top, "
       "pad_left, pad_bottom, pad_right, dil_h, dil_w, layout, stride, padding, dilation)"},
      {Without(Base(), "C"), "missing argument \"C\""},
      {With(Base(), {{"C", 0}}), "argument \"C\" = 0 is outside [1, 1048576]"},
      {With(Base(), {{"S", 100}}), "argument \"S\" = 100 is outside [1, 64]"},
      {With(Base(), {{"stride", Array({0, 1})}}), "argument \"stride[0]\" = 0"},
      {With(Base(), {{"padding", 1}, {"pad_top", 1}}), "give either \"padding\" or"},
      {With(Base(), {{"pad_left", 3}}),
       "pad_left = 3 must be less than the dilated kernel width 3 (S=3, dil_w=1)"},
      {With(Base(), {{"W", 1}, {"dil_w", 3}, {"pad_right", 4}}),
       "no output columns: padded input width 5 (W=1 + pad_left=0 + pad_right=4) is less than "
       "the dilated kernel width 7 (S=3, dil_w=3)"},
      {With(Base(), {{"layout", "NHWC"}}), "argument \"layout\" must be \"NCHW\" or \"NCHWc\""},
      {"NCHW", "arguments must be a JSON object"},
  };
  workload_test::ExpectBadArgsNameTheKey("depthwise_conv2d_nchw", cases);
}

TEST(DepthwiseConv2dWorkloadTest, MobileNetShapesHaveExactFlopsAndTensors) {
  // MobileNet-v1 block 1: 32 channels, 3x3, pad 1, 112x112.
  auto w =
      MakeOk({{"N", 1}, {"C", 32}, {"H", 112}, {"W", 112}, {"R", 3}, {"S", 3}, {"padding", 1}});
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->flops(), 7225344.0);  // 2*32*112*112*9
  EXPECT_EQ(w->ReductionLength(), 9);
  const auto& t = w->tensors();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].name, "data");
  EXPECT_EQ(t[0].shape, (std::vector<int64_t>{1, 32, 112, 112}));
  EXPECT_EQ(t[1].name, "kernel");
  EXPECT_EQ(t[1].shape, (std::vector<int64_t>{32, 1, 3, 3}));
  EXPECT_FALSE(t[1].is_output);
  EXPECT_EQ(t[2].name, "output");
  EXPECT_EQ(t[2].shape, (std::vector<int64_t>{1, 32, 112, 112}));
  EXPECT_TRUE(t[2].is_output);

  // Block 2, stride 2, batch 4: 64 channels, 112 -> 56 ((112+2-3)/2+1).
  auto down = MakeOk({{"N", 4},
                      {"C", 64},
                      {"H", 112},
                      {"W", 112},
                      {"R", 3},
                      {"S", 3},
                      {"padding", 1},
                      {"stride", 2}});
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->tensors()[2].shape, (std::vector<int64_t>{4, 64, 56, 56}));
  EXPECT_EQ(down->flops(), 2.0 * 4 * 64 * 56 * 56 * 9);
  EXPECT_EQ(down->flops(), 14450688.0);

  // 5x5 with dilation 2 ("same"): extent 9, pad 4.
  auto dilated = MakeOk({{"N", 1},
                         {"C", 3},
                         {"H", 15},
                         {"W", 9},
                         {"R", 5},
                         {"S", 5},
                         {"padding", 4},
                         {"dilation", 2}});
  ASSERT_NE(dilated, nullptr);
  EXPECT_EQ(dilated->out_h(), 15);
  EXPECT_EQ(dilated->out_w(), 9);
  EXPECT_EQ(dilated->ReductionLength(), 25);
}

TEST(DepthwiseConv2dWorkloadTest, ReferenceMatchesHandComputedValues) {
  // Two 3x3 channels, 2x2 filters: channel 0 takes [[1, 0], [0, 1]] (pixel +
  // lower-right), channel 1 takes [[0, 2], [0, 0]] (twice the right pixel).
  auto w = MakeOk({{"N", 1}, {"C", 2}, {"H", 3}, {"W", 3}, {"R", 2}, {"S", 2}});
  ASSERT_NE(w, nullptr);
  std::vector<float> data = {1, 2, 3, 4, 5, 6, 7, 8, 9,  //
                             9, 8, 7, 6, 5, 4, 3, 2, 1};
  std::vector<float> kernel = {1, 0, 0, 1, 0, 2, 0, 0};
  std::vector<float> out(8, -1);
  w->ComputeReference({data.data(), kernel.data(), out.data()});
  EXPECT_EQ(out, (std::vector<float>{6, 8, 12, 14, 16, 14, 10, 8}));

  // All-ones, 3x3 filter of ones, padding 1, stride 2 on 5x5: counts of
  // in-bounds taps at rows/columns 0, 2, 4.
  auto strided = MakeOk(
      {{"N", 1}, {"C", 1}, {"H", 5}, {"W", 5}, {"R", 3}, {"S", 3}, {"padding", 1}, {"stride", 2}});
  ASSERT_NE(strided, nullptr);
  std::vector<float> ones(25, 1), filter(9, 1), out9(9, -1);
  strided->ComputeReference({ones.data(), filter.data(), out9.data()});
  EXPECT_EQ(out9, (std::vector<float>{4, 6, 4, 6, 9, 6, 4, 6, 4}));
}

TEST(DepthwiseConv2dWorkloadTest, ReferenceMatchesBruteForceOnAwkwardShapes) {
  // k, the output channels, is c.
  const ConvShape shapes[] = {
      // n, c, h, w, k, r, s, stride_h, stride_w, top, left, bottom, right, dil_h, dil_w
      {2, 3, 7, 9, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 5, 11, 13, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      {1, 4, 17, 19, 4, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1},
      {2, 6, 9, 10, 6, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1},
      {1, 4, 12, 11, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},
      {1, 3, 8, 6, 3, 3, 2, 1, 2, 0, 1, 2, 0, 1, 1},
      {1, 2, 2, 1, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {3, 2, 10, 10, 2, 2, 2, 3, 3, 0, 0, 0, 0, 3, 3},
      {1, 2, 4, 15, 2, 1, 5, 1, 1, 0, 6, 0, 6, 1, 3},
      {1, 7, 9, 7, 7, 5, 5, 3, 1, 2, 0, 1, 4, 1, 1},
  };
  std::mt19937 rng(4321);
  for (const ConvShape& s : shapes) {
    workload_test::ExpectConvReferenceMatchesDirect(s, ConvOutChannels::kSameAsC, &rng);
  }
}

TEST(DepthwiseConv2dWorkloadTest, ReferenceIsQuickOnMobileNetShapes) {
  const ConvShape s = {1, 32, 112, 112, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  auto w = MakeOk(workload_test::ConvArgsOf(s, ConvOutChannels::kSameAsC));
  ASSERT_NE(w, nullptr);
  std::mt19937 rng(5);
  std::vector<float> data = workload_test::Random(s.n * s.c * s.h * s.w, &rng);
  std::vector<float> kernel = workload_test::Random(s.c * s.r * s.s, &rng);
  std::vector<float> out(w->tensors()[2].NumElements(), NAN);
  const auto start = std::chrono::steady_clock::now();
  w->ComputeReference({data.data(), kernel.data(), out.data()});
  std::cout << w->Describe() << ": reference "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
            << " s\n";
  std::uniform_int_distribution<int64_t> pick_c(0, s.c - 1), pick(0, 111);
  for (int i = 0; i < 200; ++i) {
    const int64_t c = pick_c(rng), y = (i % 4 == 0) ? 111 : pick(rng),
                  x = (i % 3 == 0) ? 0 : pick(rng);
    const float want =
        workload_test::DirectConv(s, ConvOutChannels::kSameAsC, data, kernel, 0, c, y, x);
    EXPECT_NEAR(out[(c * 112 + y) * 112 + x], want, 1e-5 * (1 + std::fabs(want)));
  }
}

TEST(DepthwiseConv2dWorkloadTest, FromAcceptsOnlyDepthwise) {
  auto dw = MakeWorkload("depthwise_conv2d_nchw", Base());
  ASSERT_TRUE(dw.ok()) << dw.status();
  auto conv = MakeWorkload("conv2d_nchw", With(Base(), {{"K", 8}}));
  ASSERT_TRUE(conv.ok()) << conv.status();
  const DepthwiseConv2dWorkload* as_dw =
      workload_test::ExpectFromAcceptsOnly<DepthwiseConv2dWorkload>(**dw, **conv, "dw_template");
  ASSERT_NE(as_dw, nullptr);
  EXPECT_EQ(as_dw->c(), 8);
}

}  // namespace
}  // namespace tunefleet

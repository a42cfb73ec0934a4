#include "tuner_core/workloads/conv2d.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tuner_core/workloads/conv_args.h"
#include "tuner_core/workloads/workload_test_util.h"

namespace tunefleet {
namespace {

using nlohmann::json;

using workload_test::BadArgsCase;
using workload_test::ConvShape;
using workload_test::CountPositions;
using workload_test::ExpectClose;
using workload_test::With;
using workload_test::Without;

json Array(std::vector<int64_t> v) { return json(v); }

// A small valid conv, for tests that change one key.
json Base() { return {{"N", 1}, {"C", 3}, {"H", 10}, {"W", 10}, {"K", 4}, {"R", 3}, {"S", 3}}; }

std::unique_ptr<Conv2dWorkload> MakeOk(const json& args) {
  return workload_test::MakeOk<Conv2dWorkload>(args);
}

json ArgsOf(const ConvShape& s) { return workload_test::ConvArgsOf(s, ConvOutChannels::kFromK); }

float Direct(const ConvShape& s, const std::vector<float>& data, const std::vector<float>& kernel,
             int64_t n, int64_t k, int64_t y, int64_t x) {
  return workload_test::DirectConv(s, ConvOutChannels::kFromK, data, kernel, n, k, y, x);
}

TEST(Conv2dWorkloadTest, DefaultsFillTheCanonicalArgs) {
  auto w = MakeOk(Base());
  ASSERT_NE(w, nullptr);
  const json expected = {{"N", 1},         {"C", 3},       {"H", 10},       {"W", 10},
                         {"K", 4},         {"R", 3},       {"S", 3},        {"stride_h", 1},
                         {"stride_w", 1},  {"pad_top", 0}, {"pad_left", 0}, {"pad_bottom", 0},
                         {"pad_right", 0}, {"dil_h", 1},   {"dil_w", 1},    {"layout", "NCHW"}};
  EXPECT_EQ(w->args(), expected);
  EXPECT_EQ(w->name(), "conv2d_nchw");
  EXPECT_FALSE(w->layout_nchwc());
  EXPECT_EQ(w->Describe(),
            "conv2d_nchw(C=3,H=10,K=4,N=1,R=3,S=3,W=10,dil_h=1,dil_w=1,layout=NCHW,"
            "pad_bottom=0,pad_left=0,pad_right=0,pad_top=0,stride_h=1,stride_w=1)");
  EXPECT_EQ(w->out_h(), 8);
  EXPECT_EQ(w->out_w(), 8);

  auto nchwc = MakeOk(With(Base(), {{"layout", "NCHWc"}}));
  ASSERT_NE(nchwc, nullptr);
  EXPECT_TRUE(nchwc->layout_nchwc());
  EXPECT_EQ(nchwc->args()["layout"], "NCHWc");
  // Same tensors either way: the layout only says what gets timed.
  EXPECT_EQ(nchwc->tensors()[0].shape, w->tensors()[0].shape);
  EXPECT_EQ(nchwc->tensors()[1].shape, w->tensors()[1].shape);
  EXPECT_FALSE(nchwc->args().contains("in_block"));  // tasks and records keep their keys
  auto from_blocks = MakeOk(With(Base(), {{"layout", "NCHWc"}, {"in_block", 3}}));
  ASSERT_NE(from_blocks, nullptr);
  EXPECT_EQ(from_blocks->args()["in_block"], 3);
  EXPECT_EQ(from_blocks->tensors()[0].shape, w->tensors()[0].shape);
}

TEST(Conv2dWorkloadTest, ExplicitKeysAreKeptAndCanonicalArgsRoundTrip) {
  const ConvShape s = {2, 5, 11, 13, 6, 3, 5, 2, 1, 1, 2, 0, 3, 1, 2};
  auto w = MakeOk(ArgsOf(s));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->n(), 2);
  EXPECT_EQ(w->c(), 5);
  EXPECT_EQ(w->h(), 11);
  EXPECT_EQ(w->w(), 13);
  EXPECT_EQ(w->k(), 6);
  EXPECT_EQ(w->r(), 3);
  EXPECT_EQ(w->s(), 5);
  EXPECT_EQ(w->stride_h(), 2);
  EXPECT_EQ(w->stride_w(), 1);
  EXPECT_EQ(w->pad_top(), 1);
  EXPECT_EQ(w->pad_left(), 2);
  EXPECT_EQ(w->pad_bottom(), 0);
  EXPECT_EQ(w->pad_right(), 3);
  EXPECT_EQ(w->dil_h(), 1);
  EXPECT_EQ(w->dil_w(), 2);
  auto again = MakeOk(w->args());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->args(), w->args());
}

TEST(Conv2dWorkloadTest, ShorthandsExpandIntoTheExplicitKeys) {
  struct Case {
    json extra;
    int64_t stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right, dil_h, dil_w;
  } cases[] = {
      {{{"stride", 2}}, 2, 2, 0, 0, 0, 0, 1, 1},
      {{{"stride", Array({2, 1})}}, 2, 1, 0, 0, 0, 0, 1, 1},
      {{{"padding", 1}}, 1, 1, 1, 1, 1, 1, 1, 1},
      {{{"padding", Array({1, 2})}}, 1, 1, 1, 2, 1, 2, 1, 1},
      {{{"padding", Array({0, 1, 2, 0})}}, 1, 1, 0, 1, 2, 0, 1, 1},
      {{{"dilation", 2}}, 1, 1, 0, 0, 0, 0, 2, 2},
      {{{"dilation", Array({1, 2})}}, 1, 1, 0, 0, 0, 0, 1, 2},
      {{{"stride", 2}, {"padding", 1}, {"dilation", 1}}, 2, 2, 1, 1, 1, 1, 1, 1},
  };
  for (const Case& c : cases) {
    auto w = MakeOk(With(Base(), c.extra));
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->stride_h(), c.stride_h) << c.extra.dump();
    EXPECT_EQ(w->stride_w(), c.stride_w) << c.extra.dump();
    EXPECT_EQ(w->pad_top(), c.pad_top) << c.extra.dump();
    EXPECT_EQ(w->pad_left(), c.pad_left) << c.extra.dump();
    EXPECT_EQ(w->pad_bottom(), c.pad_bottom) << c.extra.dump();
    EXPECT_EQ(w->pad_right(), c.pad_right) << c.extra.dump();
    EXPECT_EQ(w->dil_h(), c.dil_h) << c.extra.dump();
    EXPECT_EQ(w->dil_w(), c.dil_w) << c.extra.dump();
    // Shorthands are input only.
    EXPECT_FALSE(w->args().contains("stride"));
    EXPECT_FALSE(w->args().contains("padding"));
    EXPECT_FALSE(w->args().contains("dilation"));
    EXPECT_EQ(w->args()["pad_bottom"], c.pad_bottom);
    EXPECT_EQ(w->args()["dil_w"], c.dil_w);
  }
}

TEST(Conv2dWorkloadTest, BadArgumentsAreInvalidArgumentNamingTheKey) {
  const int64_t big = int64_t{1} << 20;
  const BadArgsCase cases[] = {
      {Without(Base(), "R"), "missing argument \"R\""},
      {Without(Base(), "K"), "missing argument \"K\""},
      {With(Base(), {{"N", 0}}), "argument \"N\" = 0 is outside [1, 1048576]"},
      {With(Base(), {{"K", big + 1}}), "argument \"K\" = 1048577 is outside"},
      {With(Base(), {{"R", 65}}), "argument \"R\" = 65 is outside [1, 64]"},
      {With(Base(), {{"S", 0}}), "argument \"S\" = 0"},
      {With(Base(), {{"H", "x"}}), "argument \"H\" must be an integer, got \"x\""},
      {With(Base(), {{"W", 3.0}}), "argument \"W\" must be an integer"},
      {With(Base(), {{"C", true}}), "argument \"C\" must be an integer"},
      {With(Base(), {{"N", -1}}), "argument \"N\" = -1"},
      {With(Base(), {{"stride_h", 0}}), "argument \"stride_h\" = 0"},
      {With(Base(), {{"stride_w", -2}}), "argument \"stride_w\" = -2"},
      {With(Base(), {{"dil_w", 0}}), "argument \"dil_w\" = 0"},
      {With(Base(), {{"pad_left", -1}}), "argument \"pad_left\" = -1 is outside [0,"},
      {With(Base(), {{"stride", Array({1, 2, 3})}}),
       "argument \"stride\" must be an integer or a list of 2 integers"},
      {With(Base(), {{"stride", "2"}}), "argument \"stride\" must be an integer or a list"},
      {With(Base(), {{"stride", Array({2, 0})}}), "argument \"stride[1]\" = 0"},
      {With(Base(), {{"stride", 0}}), "argument \"stride\" = 0"},
      {With(Base(), {{"padding", Array({1, 2, 3})}}),
       "argument \"padding\" must be an integer or a list of 2 or 4 integers"},
      {With(Base(), {{"padding", -1}}), "argument \"padding\" = -1"},
      {With(Base(), {{"padding", json::array({1, "a"})}}),
       "argument \"padding[1]\" must be an integer"},
      {With(Base(), {{"dilation", Array({1, 0})}}), "argument \"dilation[1]\" = 0"},
      {With(Base(), {{"stride", 2}, {"stride_h", 2}}),
       "give either \"stride\" or \"stride_h\"/\"stride_w\", not both"},
      {With(Base(), {{"padding", 1}, {"pad_right", 1}}),
       "give either \"padding\" or \"pad_top\"/\"pad_left\"/\"pad_bottom\"/\"pad_right\", not "
       "both (got \"padding\" and \"pad_right\")"},
      {With(Base(), {{"dilation", 1}, {"dil_h", 1}}),
       "give either \"dilation\" or \"dil_h\"/\"dil_w\", not both"},
      {With(Base(), {{"pad_top", 3}}),
       "pad_top = 3 must be less than the dilated kernel height 3 (R=3, dil_h=1)"},
      {With(Base(), {{"pad_right", 5}, {"dil_w", 2}}),
       "pad_right = 5 must be less than the dilated kernel width 5 (S=3, dil_w=2)"},
      {With(Base(), {{"padding", 3}}), "pad_top = 3 (from \"padding\") must be less than"},
      {With(Base(), {{"R", 1}, {"pad_bottom", 1}}),
       "pad_bottom = 1 must be less than the dilated kernel height 1"},
      {With(Base(), {{"layout", "NHWC"}}),
       "argument \"layout\" must be \"NCHW\" or \"NCHWc\", got \"NHWC\""},
      {With(Base(), {{"groups", 2}}),
       "unknown argument \"groups\" (accepted: N, C, H, W, K, group, in_block, R, S, stride_h, "
       "stride_w, "
       "pad_top, "
       "pad_left, pad_bottom, pad_right, dil_h, dil_w, layout, stride, padding, dilation)"},
      {With(Base(), {{"group", 3}}), "group=3 does not divide C="},
      {With(Base(), {{"group", 0}}), "\"group\""},
      {With(Base(), {{"in_block", 4}}),
       "in_block is for the NCHWc layout, whose input arrives blocked"},
      {With(Base(), {{"in_block", 5}, {"layout", "NCHWc"}}), "in_block=5 does not divide C="},
      {With(Base(), {{"in_block", 0}, {"layout", "NCHWc"}}), "\"in_block\""},
      {With(Base(), {{"H", 2}}),
       "no output rows: padded input height 2 (H=2 + pad_top=0 + pad_bottom=0) is less than the "
       "dilated kernel height 3 (R=3, dil_h=1)"},
      {With(Base(), {{"W", 4}, {"dil_w", 2}, {"pad_left", 0}}),
       "no output columns: padded input width 4 (W=4 + pad_left=0 + pad_right=0) is less than "
       "the dilated kernel width 5 (S=3, dil_w=2)"},
      {With(Base(), {{"N", big}, {"C", big}, {"H", big}, {"W", big}, {"R", 1}, {"S", 1}}),
       "tensor \"data\" of shape [1048576,1048576,1048576,1048576] has more than"},
      {json::array({1, 2}), "arguments must be a JSON object"},
  };
  workload_test::ExpectBadArgsNameTheKey("conv2d_nchw", cases);
}

TEST(Conv2dWorkloadTest, ResNet18ShapesHaveExactFlopsAndTensors) {
  // conv2_x: 64 -> 64, 3x3, pad 1, 56x56.
  auto layer = MakeOk(
      {{"N", 1}, {"C", 64}, {"H", 56}, {"W", 56}, {"K", 64}, {"R", 3}, {"S", 3}, {"padding", 1}});
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(layer->out_h(), 56);
  EXPECT_EQ(layer->out_w(), 56);
  EXPECT_EQ(layer->flops(), 231211008.0);  // 2*64*56*56*64*9
  EXPECT_EQ(layer->ReductionLength(), 576);
  const auto& t = layer->tensors();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].name, "data");
  EXPECT_EQ(t[0].shape, (std::vector<int64_t>{1, 64, 56, 56}));
  EXPECT_FALSE(t[0].is_output);
  EXPECT_EQ(t[1].name, "kernel");
  EXPECT_EQ(t[1].shape, (std::vector<int64_t>{64, 64, 3, 3}));
  EXPECT_FALSE(t[1].is_output);
  EXPECT_EQ(t[2].name, "output");
  EXPECT_EQ(t[2].shape, (std::vector<int64_t>{1, 64, 56, 56}));
  EXPECT_TRUE(t[2].is_output);

  // Stem: 3 -> 64, 7x7, stride 2, pad 3, 224x224 -> 112x112.
  auto stem = MakeOk({{"N", 1},
                      {"C", 3},
                      {"H", 224},
                      {"W", 224},
                      {"K", 64},
                      {"R", 7},
                      {"S", 7},
                      {"stride", 2},
                      {"padding", 3}});
  ASSERT_NE(stem, nullptr);
  EXPECT_EQ(stem->tensors()[2].shape, (std::vector<int64_t>{1, 64, 112, 112}));
  EXPECT_EQ(stem->flops(), 236027904.0);  // 2*64*112*112*3*49
  EXPECT_EQ(stem->ReductionLength(), 147);

  // Downsampling 1x1 shortcut: 64 -> 128, stride 2, 56 -> 28, batch 8.
  auto shortcut = MakeOk(
      {{"N", 8}, {"C", 64}, {"H", 56}, {"W", 56}, {"K", 128}, {"R", 1}, {"S", 1}, {"stride", 2}});
  ASSERT_NE(shortcut, nullptr);
  EXPECT_EQ(shortcut->tensors()[2].shape, (std::vector<int64_t>{8, 128, 28, 28}));
  EXPECT_EQ(shortcut->flops(), 2.0 * 8 * 128 * 28 * 28 * 64);
  EXPECT_EQ(shortcut->flops(), 102760448.0);
}

TEST(Conv2dWorkloadTest, OutputSizeOfAwkwardShapes) {
  struct Case {
    int64_t in, kernel, stride, pad_lo, pad_hi, dil, expected;
  } cases[] = {
      {7, 3, 2, 0, 0, 1, 3},      // odd size, stride 2: (7-3)/2+1
      {8, 3, 2, 1, 1, 1, 4},      // padding that does not divide: 7/2+1
      {224, 7, 2, 3, 3, 1, 112},  // 7x7 stem
      {56, 1, 2, 0, 0, 1, 28},    // 1x1 stride 2
      {5, 1, 3, 0, 0, 1, 2},      // stride beyond the kernel
      {9, 3, 1, 2, 2, 2, 9},      // dilation 2, "same" padding
      {10, 3, 2, 0, 0, 2, 3},     // dilation 2, stride 2: (10-5)/2+1
      {6, 4, 1, 1, 2, 1, 6},      // asymmetric padding, even kernel
      {1, 3, 1, 1, 1, 1, 1},      // kernel larger than the input
      {2, 3, 1, 0, 1, 1, 1},      // one-sided padding just fits
      {13, 7, 3, 2, 0, 1, 3},     // 8/3+1
      {17, 5, 4, 3, 0, 3, 2},     // dilated extent 13: (17+3-13)/4+1
  };
  for (const Case& c : cases) {
    // The case on the row axis, then on the column axis, the other axis 1
    // wide, so each axis is checked on its own.
    const json rows = {{"N", 1},
                       {"C", 1},
                       {"H", c.in},
                       {"W", 1},
                       {"K", 1},
                       {"R", c.kernel},
                       {"S", 1},
                       {"stride_h", c.stride},
                       {"pad_top", c.pad_lo},
                       {"pad_bottom", c.pad_hi},
                       {"dil_h", c.dil}};
    const json cols = {{"N", 1},
                       {"C", 1},
                       {"H", 1},
                       {"W", c.in},
                       {"K", 1},
                       {"R", 1},
                       {"S", c.kernel},
                       {"stride_w", c.stride},
                       {"pad_left", c.pad_lo},
                       {"pad_right", c.pad_hi},
                       {"dil_w", c.dil}};
    auto h = MakeOk(rows);
    auto w = MakeOk(cols);
    ASSERT_NE(h, nullptr);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(h->out_h(), c.expected) << rows.dump();
    EXPECT_EQ(h->out_w(), 1) << rows.dump();
    EXPECT_EQ(w->out_w(), c.expected) << cols.dump();
    EXPECT_EQ(w->out_h(), 1) << cols.dump();
    EXPECT_EQ(c.expected, CountPositions(c.in, c.pad_lo, c.pad_hi, c.kernel, c.dil, c.stride));
    EXPECT_EQ(h->tensors()[2].shape, (std::vector<int64_t>{1, 1, c.expected, 1}));
    EXPECT_EQ(h->flops(), 2.0 * c.expected * c.kernel);
  }
}

// LiveTapShare against a count of every (output pixel, tap) pair whose
// tap reads inside the image: unpadded (1), ResNet's 3x3 (just under 1),
// strided with asymmetric padding, DeepLabV3's rate 24 on 28x28 (0.18) and
// a rate past the map (only the centre tap: 1/9).
TEST(Conv2dWorkloadTest, LiveTapShareCountsTheTapsInsideTheImage) {
  const json cases[] = {
      {{"N", 1}, {"C", 1}, {"H", 8}, {"W", 8}, {"K", 1}, {"R", 3}, {"S", 3}},
      {{"N", 1}, {"C", 1}, {"H", 56}, {"W", 56}, {"K", 1}, {"R", 3}, {"S", 3}, {"padding", 1}},
      {{"N", 1},
       {"C", 1},
       {"H", 15},
       {"W", 17},
       {"K", 1},
       {"R", 3},
       {"S", 5},
       {"stride", 2},
       {"padding", {1, 0, 2, 3}}},
      {{"N", 1},
       {"C", 1},
       {"H", 28},
       {"W", 28},
       {"K", 1},
       {"R", 3},
       {"S", 3},
       {"dilation", 24},
       {"padding", 24}},
      {{"N", 1},
       {"C", 1},
       {"H", 7},
       {"W", 7},
       {"K", 1},
       {"R", 3},
       {"S", 3},
       {"dilation", 9},
       {"padding", 9}},
  };
  std::vector<double> shares;
  for (const json& args : cases) {
    absl::StatusOr<ConvArgs> a = ParseConvArgs("conv2d_nchw", args, ConvOutChannels::kFromK);
    ASSERT_TRUE(a.ok()) << a.status();
    int64_t live = 0;
    for (int64_t oh = 0; oh < a->out_h; ++oh) {
      for (int64_t ow = 0; ow < a->out_w; ++ow) {
        for (int64_t r = 0; r < a->r; ++r) {
          for (int64_t s = 0; s < a->s; ++s) {
            const int64_t ih = oh * a->stride_h + r * a->dil_h - a->pad_top;
            const int64_t iw = ow * a->stride_w + s * a->dil_w - a->pad_left;
            live += ih >= 0 && ih < a->h && iw >= 0 && iw < a->w;
          }
        }
      }
    }
    const double pairs = static_cast<double>(a->out_h * a->out_w * a->r * a->s);
    EXPECT_DOUBLE_EQ(LiveTapShare(*a), live / pairs) << args.dump();
    shares.push_back(LiveTapShare(*a));
  }
  EXPECT_EQ(shares[0], 1.0);
  EXPECT_NEAR(shares[1], (166.0 / 168) * (166.0 / 168), 1e-12);
  EXPECT_NEAR(shares[3], (36.0 / 84) * (36.0 / 84), 1e-12);
  EXPECT_NEAR(shares[4], 1.0 / 9, 1e-12);
}

TEST(Conv2dWorkloadTest, ReferenceMatchesHandComputedValues) {
  // 3x3 input 1..9, 2x2 kernel [[1, 0], [0, 1]]: each output adds a pixel
  // and its lower-right neighbour.
  {
    auto w = MakeOk({{"N", 1}, {"C", 1}, {"H", 3}, {"W", 3}, {"K", 1}, {"R", 2}, {"S", 2}});
    ASSERT_NE(w, nullptr);
    std::vector<float> data = {1, 2, 3, 4, 5, 6, 7, 8, 9}, kernel = {1, 0, 0, 1}, out(4, -1);
    w->ComputeReference({data.data(), kernel.data(), out.data()});
    EXPECT_EQ(out, (std::vector<float>{6, 8, 12, 14}));
  }
  // All-ones 3x3 input and 3x3 kernel with padding 1: each output counts the
  // in-bounds taps.
  {
    auto w = MakeOk(
        {{"N", 1}, {"C", 1}, {"H", 3}, {"W", 3}, {"K", 1}, {"R", 3}, {"S", 3}, {"padding", 1}});
    ASSERT_NE(w, nullptr);
    std::vector<float> data(9, 1), kernel(9, 1), out(9, -1);
    w->ComputeReference({data.data(), kernel.data(), out.data()});
    EXPECT_EQ(out, (std::vector<float>{4, 6, 4, 6, 9, 6, 4, 6, 4}));
  }
  // Two channels in, two out, 1x1: out0 = ch0 + ch1, out1 = ch0 - ch1.
  {
    auto w = MakeOk({{"N", 1}, {"C", 2}, {"H", 2}, {"W", 2}, {"K", 2}, {"R", 1}, {"S", 1}});
    ASSERT_NE(w, nullptr);
    std::vector<float> data = {1, 2, 3, 4, 5, 6, 7, 8}, kernel = {1, 1, 1, -1}, out(8, -1);
    w->ComputeReference({data.data(), kernel.data(), out.data()});
    EXPECT_EQ(out, (std::vector<float>{6, 8, 10, 12, -4, -4, -4, -4}));
  }
  // Stride 2 over a 1x5 row with kernel [1, 10] and padding left 1:
  // outputs at input columns (-1, 0), (1, 2), (3, 4).
  {
    auto w = MakeOk({{"N", 1},
                     {"C", 1},
                     {"H", 1},
                     {"W", 5},
                     {"K", 1},
                     {"R", 1},
                     {"S", 2},
                     {"stride_w", 2},
                     {"pad_left", 1}});
    ASSERT_NE(w, nullptr);
    ASSERT_EQ(w->out_w(), 3);
    std::vector<float> data = {1, 2, 3, 4, 5}, kernel = {1, 10}, out(3, -1);
    w->ComputeReference({data.data(), kernel.data(), out.data()});
    EXPECT_EQ(out, (std::vector<float>{10, 2 + 30, 4 + 50}));
  }
}

TEST(Conv2dWorkloadTest, ReferenceMatchesBruteForceOnAwkwardShapes) {
  const ConvShape shapes[] = {
      // n, c, h, w, k, r, s, stride_h, stride_w, top, left, bottom, right, dil_h, dil_w
      {2, 3, 7, 9, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},    // "same" 3x3, batch 2
      {1, 5, 11, 13, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},  // odd sizes, stride 2
      {1, 3, 17, 19, 5, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1},  // 7x7 stem-like
      {2, 8, 9, 10, 7, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1},   // 1x1 stride 2
      {1, 4, 12, 11, 3, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},  // dilation 2
      {1, 3, 8, 6, 2, 3, 2, 1, 2, 0, 1, 2, 0, 1, 1},    // asymmetric padding
      {1, 2, 2, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},    // kernel larger than input
      {1, 2, 10, 10, 2, 2, 2, 3, 3, 0, 0, 0, 0, 3, 3},  // stride 3, dilation 3
      {1, 2, 4, 15, 3, 1, 5, 1, 1, 0, 6, 0, 6, 1, 3},   // 1x5, wide dilated pad
      {3, 3, 9, 7, 2, 3, 3, 3, 1, 2, 0, 1, 2, 1, 1},    // stride 3x1, mixed pads
      {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},    // 1x1x1x1
      {2, 1, 6, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},    // one input channel, three out
  };
  std::mt19937 rng(1234);
  for (const ConvShape& s : shapes) {
    workload_test::ExpectConvReferenceMatchesDirect(s, ConvOutChannels::kFromK, &rng);
  }
}

TEST(Conv2dWorkloadTest, ReferenceHandlesResNet18LayersQuickly) {
  const ConvShape shapes[] = {
      {1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},    // conv2_x, 231 MFLOP
      {1, 3, 224, 224, 64, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1},   // stem, 236 MFLOP
      {1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},  // conv4_x
  };
  std::mt19937 rng(99);
  for (const ConvShape& s : shapes) {
    auto w = MakeOk(ArgsOf(s));
    ASSERT_NE(w, nullptr);
    std::vector<float> data = workload_test::Random(s.n * s.c * s.h * s.w, &rng);
    std::vector<float> kernel = workload_test::Random(s.k * s.c * s.r * s.s, &rng);
    std::vector<float> out(w->tensors()[2].NumElements(), NAN);
    const auto start = std::chrono::steady_clock::now();
    w->ComputeReference({data.data(), kernel.data(), out.data()});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << w->Describe() << ": reference " << seconds << " s (" << w->flops() / seconds / 1e9
              << " GFLOP/s)\n";
    // Spot checks, borders included.
    std::uniform_int_distribution<int64_t> pick_k(0, s.k - 1), pick_y(0, w->out_h() - 1),
        pick_x(0, w->out_w() - 1);
    for (int i = 0; i < 300; ++i) {
      int64_t k = pick_k(rng), y = pick_y(rng), x = pick_x(rng);
      if (i % 3 == 0) y = (i % 2 == 0) ? 0 : w->out_h() - 1;
      if (i % 5 == 0) x = (i % 2 == 0) ? 0 : w->out_w() - 1;
      ExpectClose(out[(k * w->out_h() + y) * w->out_w() + x], Direct(s, data, kernel, 0, k, y, x),
                  absl::StrCat(w->Describe(), " at ", k, ",", y, ",", x));
    }
  }
}

TEST(Conv2dWorkloadTest, FromAcceptsOnlyConv2d) {
  auto conv = MakeWorkload("conv2d_nchw", Base());
  ASSERT_TRUE(conv.ok()) << conv.status();
  auto dense = MakeWorkload("dense", {{"M", 4}, {"N", 4}, {"K", 4}});
  ASSERT_TRUE(dense.ok());
  const Conv2dWorkload* as_conv =
      workload_test::ExpectFromAcceptsOnly<Conv2dWorkload>(**conv, **dense, "conv2d_template");
  ASSERT_NE(as_conv, nullptr);
  EXPECT_EQ(as_conv->k(), 4);
}

}  // namespace
}  // namespace tunefleet

#include <algorithm>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tuner_core/ir/ir_printer.h"
#include "tuner_core/templates/conv2d_nchwc_x86.h"
#include "tuner_core/templates/nchwc_layout.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/workloads/conv_workload.h"

namespace tunefleet {
namespace {

TEST(TemplatesTest, FindsTemplatesByNameAndDefaultForDense) {
  auto pack = FindTemplate("dense_pack.x86");
  ASSERT_TRUE(pack.ok());
  EXPECT_EQ((*pack)->workload_name(), "dense");
  auto def = DefaultTemplate("dense");
  ASSERT_TRUE(def.ok());
  EXPECT_EQ((*def)->name(), "dense_gemm.x86");
  auto missing = FindTemplate("conv2d_magic");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("dense_pack.x86"), std::string::npos);
}

TEST(TemplatesTest, TiledSpaceIsTheProductOfTwoFactorSplits) {
  auto task = Task::Make("dense_tiled", "dense", {{"M", 32}, {"N", 32}, {"K", 8}}, "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ((*task)->space().size(), 36);  // 6 factors of 32, twice
}

TEST(TemplatesTest, PackSpaceContainsTheVendorLevelConfig) {
  auto task =
      Task::Make("dense_pack.x86", "dense", {{"M", 1024}, {"N", 1024}, {"K", 1024}}, "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  // MR=6, NR=16 (2 x 8-lane vectors), KC=256: the classic AVX2 micro-kernel.
  auto config = (*task)->space().FromJson({{"entity",
                                            {{"vec", "ot", 8},
                                             {"nr_vecs", "ot", 2},
                                             {"mr", "ot", 6},
                                             {"kc", "ot", 256},
                                             {"mc_panels", "ot", 16},
                                             {"nc_panels", "ot", 8},
                                             {"unroll_k", "ot", 4},
                                             {"pack_a", "ot", 1},
                                             {"order", "ot", "nm"},
                                             {"fuse", "ot", "mn"}}}});
  ASSERT_TRUE(config.ok()) << config.status();
  auto func = (*task)->tmpl().Instantiate((*task)->workload(), *config);
  ASSERT_TRUE(func.ok()) << func.status();
  const std::string text = ir::ToString(*func);
  EXPECT_NE(text.find("parallel for (blk"), std::string::npos) << text;
  EXPECT_NE(text.find("vectorized for"), std::string::npos);
  EXPECT_NE(text.find("allocate acc[float32 * 96] in stack"), std::string::npos);
}

TEST(TemplatesTest, EveryWorkloadHasADefaultTemplate) {
  for (const std::string& workload : WorkloadNames()) {
    auto tmpl = DefaultTemplate(workload);
    ASSERT_TRUE(tmpl.ok()) << workload << ": " << tmpl.status();
    EXPECT_EQ((*tmpl)->workload_name(), workload);
  }
  EXPECT_EQ((*DefaultTemplate("conv2d_nchw"))->name(), "conv2d_nchwc.x86");
  EXPECT_EQ((*DefaultTemplate("depthwise_conv2d_nchw"))->name(), "depthwise_conv2d_nchwc.x86");
  EXPECT_EQ((*DefaultTemplate("batch_matmul"))->name(), "batch_matmul_pack.x86");
}

// Grouped convolutions of fewer than 16 output channels per group get the
// template whose blocks hold whole groups; wider groups, ungrouped
// convolutions and CUDA targets keep their workload's default, and the
// template refuses what it does not take.
TEST(TemplatesTest, FewChannelsPerGroupGetBlocksOfWholeGroups) {
  auto conv = [](int64_t k, int64_t group, int64_t c = 0) {
    return MakeWorkload("conv2d_nchw", {{"N", 1},
                                        {"C", c > 0 ? c : k},
                                        {"H", 14},
                                        {"W", 14},
                                        {"K", k},
                                        {"R", 3},
                                        {"S", 3},
                                        {"padding", 1},
                                        {"group", group},
                                        {"layout", "NCHWc"}})
        .value();
  };
  EXPECT_EQ((*DefaultTemplateFor(*conv(128, 32)))->name(),
            "group_conv2d_nchwc.x86");                                                // 4 per group
  EXPECT_EQ((*DefaultTemplateFor(*conv(96, 12)))->name(), "group_conv2d_nchwc.x86");  // 8
  EXPECT_EQ((*DefaultTemplateFor(*conv(512, 32)))->name(), "conv2d_nchwc.x86");       // 16
  EXPECT_EQ((*DefaultTemplateFor(*conv(64, 1)))->name(), "conv2d_nchwc.x86");
  // 8 outputs but 64 inputs per group: two groups' inputs are 128 channels.
  EXPECT_EQ((*DefaultTemplateFor(*conv(64, 8, 512)))->name(), "conv2d_nchwc.x86");
  EXPECT_EQ((*DefaultTemplateFor(*conv(128, 32), "cuda -mcpu=sm_90"))->name(), "conv2d_igemm.cuda");
  const Template& group = **FindTemplate("group_conv2d_nchwc.x86");
  absl::StatusOr<ConfigSpace> ungrouped = group.DefineSpace(*conv(64, 1));
  EXPECT_EQ(ungrouped.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ungrouped.status().message().find("not 1 groups of 64 (64 inputs each)"),
            std::string::npos);
  // Blocks of 1, 2, 4, 8 and 16 groups of 4 channels (at most 64).
  absl::StatusOr<ConfigSpace> space = group.DefineSpace(*conv(128, 32));
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(space->knob_size(0), 5);
  absl::StatusOr<std::unique_ptr<Task>> task =
      Task::Make("", "conv2d_nchw", conv(128, 32)->args(), "llvm -mcpu=znver4");
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ((*task)->tmpl().name(), "group_conv2d_nchwc.x86");
}

// The conv2d space holds AutoTVM's style of good x86 config for a ResNet
// layer (16-channel blocks, a row of output pixels in registers, 16-lane
// vectors), and it instantiates to the blocked, staged kernel.
TEST(TemplatesTest, Conv2dSpaceContainsTheClassicBlockedConfig) {
  auto task = Task::Make("", "conv2d_nchw",
                         {{"N", 1},
                          {"C", 64},
                          {"H", 56},
                          {"W", 56},
                          {"K", 64},
                          {"R", 3},
                          {"S", 3},
                          {"padding", 1},
                          {"layout", "NCHWc"}},
                         "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  auto config = (*task)->space().FromJson({{"entity",
                                            {{"tile_ic", "ot", 16},
                                             {"tile_oc", "ot", 16},
                                             {"tile_ow", "ot", 14},
                                             {"vec", "ot", 16},
                                             {"reduce", "ot", "c_kh_ic_kw"}}}});
  ASSERT_TRUE(config.ok()) << config.status();
  auto func = (*task)->tmpl().Instantiate((*task)->workload(), *config);
  ASSERT_TRUE(func.ok()) << func.status();
  ASSERT_EQ(func->staged.size(), 3u);  // blocked input, packed weights, blocked output
  EXPECT_TRUE(func->prepare.defined());
  EXPECT_TRUE(func->finish.defined());
  const std::string text = ir::ToString(*func);
  EXPECT_NE(text.find("allocate acc[float32 * 224] in stack"), std::string::npos) << text;
  EXPECT_NE(text.find("vectorized for"), std::string::npos);
  // In the NCHW layout the same config packs inside the timed body instead.
  auto nchw = Task::Make(
      "", "conv2d_nchw",
      {{"N", 1}, {"C", 64}, {"H", 56}, {"W", 56}, {"K", 64}, {"R", 3}, {"S", 3}, {"padding", 1}},
      "llvm");
  ASSERT_TRUE(nchw.ok());
  auto plain = (*nchw)->tmpl().Instantiate((*nchw)->workload(), *config);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(plain->staged.empty());
  EXPECT_FALSE(plain->prepare.defined());
}

// Rows the knob does not divide are cut into as few tiles as it allows, as
// even as they can be; knob values that cut alike are one kernel.
TEST(TemplatesTest, ConvRowTilesAreEvenAndKnobValuesThatCutAlikeAreOneKernel) {
  struct Cut {
    int64_t out_w, knob, width, tiles, narrow;
  };
  for (const Cut& c : std::vector<Cut>{{56, 5, 5, 8, 4},
                                       {14, 6, 5, 2, 1},
                                       {14, 5, 5, 2, 1},
                                       {7, 6, 4, 1, 1},
                                       {28, 7, 7, 4, 0},
                                       {28, 28, 28, 1, 0},
                                       {54, 32, 27, 2, 0},
                                       {5, 1, 1, 5, 0}}) {
    EXPECT_EQ(RowTileWidth(c.out_w, c.knob), c.width) << c.out_w << " by " << c.knob;
    absl::StatusOr<RowTiling> tiling = TileOutputRows(c.out_w, c.knob, 8, 8);
    ASSERT_TRUE(tiling.ok()) << tiling.status();
    EXPECT_EQ(tiling->width, c.width) << c.out_w << " by " << c.knob;
    EXPECT_EQ(tiling->tiles, c.tiles) << c.out_w << " by " << c.knob;
    EXPECT_EQ(tiling->narrow, c.narrow) << c.out_w << " by " << c.knob;
    EXPECT_EQ(tiling->tiles * tiling->width + tiling->narrow * (tiling->width - 1), c.out_w);
  }
  // On 14 columns tile_ow 5 and 6 cut 5 + 5 + 4: one kernel, measured once.
  auto task = Task::Make("conv2d_nchwc.x86", "conv2d_nchw",
                         {{"N", 1},
                          {"C", 16},
                          {"H", 14},
                          {"W", 14},
                          {"K", 16},
                          {"R", 3},
                          {"S", 3},
                          {"padding", 1},
                          {"layout", "NCHWc"}},
                         "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  auto with_ow = [&](int64_t tile_ow) {
    return (*task)->space().FromJson({{"entity",
                                       {{"tile_ic", "ot", 8},
                                        {"tile_oc", "ot", 16},
                                        {"tile_ow", "ot", tile_ow},
                                        {"vec", "ot", 8},
                                        {"reduce", "ot", "c_kh_ic_kw_inline_pad"}}}});
  };
  auto five = with_ow(5), six = with_ow(6), seven = with_ow(7), eight = with_ow(8);
  ASSERT_TRUE(five.ok() && six.ok() && seven.ok() && eight.ok());
  auto f5 = (*task)->tmpl().Instantiate((*task)->workload(), *five);
  auto f6 = (*task)->tmpl().Instantiate((*task)->workload(), *six);
  ASSERT_TRUE(f5.ok() && f6.ok());
  EXPECT_EQ(ir::ToString(f5->body), ir::ToString(f6->body));
  const std::vector<int64_t> same = (*task)->space().EquivalentIndices(five->index());
  EXPECT_NE(std::find(same.begin(), same.end(), six->index()), same.end());
  EXPECT_EQ(same.size(), 2u);
  EXPECT_EQ((*task)->space().CanonicalIndex(eight->index()), seven->index());  // 7 + 7
}

TEST(TemplatesTest, PointwiseConvJoinsItsRowsAndReduceOrdersThatBuildAlikeAreOneKernel) {
  // Padding only on the axes whose kernel is wider than 1 (as it must be).
  auto conv_task = [](int64_t r, int64_t s, int64_t stride, int64_t pad) {
    return Task::Make("conv2d_nchwc.x86", "conv2d_nchw",
                      {{"N", 1},
                       {"C", 32},
                       {"H", 7},
                       {"W", 7},
                       {"K", 64},
                       {"R", r},
                       {"S", s},
                       {"stride", stride},
                       {"padding", {r > 1 ? pad : 0, s > 1 ? pad : 0}},
                       {"layout", "NCHWc"}},
                      "llvm");
  };
  auto pointwise = conv_task(1, 1, 1, 0);
  ASSERT_TRUE(pointwise.ok()) << pointwise.status();
  const auto* conv = dynamic_cast<const ConvWorkload*>(&(*pointwise)->workload());
  ASSERT_NE(conv, nullptr);
  const ConvArgs joined = TiledConvShape(conv->conv_args());
  EXPECT_EQ(joined.h, 1);
  EXPECT_EQ(joined.w, 49);
  EXPECT_EQ(joined.out_h, 1);
  EXPECT_EQ(joined.out_w, 49);
  // Strided, its gathered pixels (4x4) joined at stride 1.
  auto strided = conv_task(1, 1, 2, 0);
  ASSERT_TRUE(strided.ok()) << strided.status();
  const ConvArgs gathered =
      TiledConvShape(dynamic_cast<const ConvWorkload&>((*strided)->workload()).conv_args());
  EXPECT_EQ(gathered.w, 16);
  EXPECT_EQ(gathered.out_w, 16);
  EXPECT_EQ(gathered.out_h, 1);
  EXPECT_EQ(gathered.stride_w, 1);
  // Wider kernels read rows apart: not joined.
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{3, 1, 1, 1}, {3, 3, 1, 0}}) {
    auto other = conv_task(shape[0], shape[1], shape[2], shape[3]);
    ASSERT_TRUE(other.ok()) << other.status();
    const auto* c = dynamic_cast<const ConvWorkload*>(&(*other)->workload());
    EXPECT_EQ(TiledConvShape(c->conv_args()).out_w, c->out_w());
    EXPECT_EQ(TiledConvShape(c->conv_args()).out_h, c->out_h());
  }
  ConvArgs padded = conv->conv_args();  // no workload pads a 1x1 kernel; the rule still holds
  padded.pad_left = 1;
  EXPECT_EQ(TiledConvShape(padded).out_w, 7);
  auto with = [&](const Task& task, int64_t tile_ow, const std::string& reduce) {
    return task.space().FromJson({{"entity",
                                   {{"tile_ic", "ot", 8},
                                    {"tile_oc", "ot", 16},
                                    {"tile_ow", "ot", tile_ow},
                                    {"vec", "ot", 8},
                                    {"reduce", "ot", reduce}}}});
  };
  // The knob keeps the image's candidates (older records stay valid), but
  // its values cut the joined row: on 49 columns 4 and 6 differ (on a row of
  // 7 both cut 4 + 3, one kernel).
  auto four = with(**pointwise, 4, "c_kh_kw_ic"), six = with(**pointwise, 6, "c_kh_kw_ic");
  ASSERT_TRUE(four.ok() && six.ok()) << four.status() << six.status();
  EXPECT_EQ((*pointwise)->space().knob_size(2), 7);
  EXPECT_NE((*pointwise)->space().CanonicalIndex(six->index()), four->index());
  auto padded3x3 = conv_task(3, 3, 1, 1);
  ASSERT_TRUE(padded3x3.ok()) << padded3x3.status();
  auto four3x3 = with(**padded3x3, 4, "c_kh_kw_ic"), six3x3 = with(**padded3x3, 6, "c_kh_kw_ic");
  ASSERT_TRUE(four3x3.ok() && six3x3.ok());
  EXPECT_EQ((*padded3x3)->space().CanonicalIndex(six3x3->index()), four3x3->index());
  auto func = (*pointwise)->tmpl().Instantiate((*pointwise)->workload(), *six);
  ASSERT_TRUE(func.ok()) << func.status();
  // 4 x 6 + 5 x 5 columns by 16 channels. Four channel blocks are fewer
  // parallel items than the image's 7 rows each would give (28), so the
  // row's nine tiles go in nine parts of one (36 items).
  const std::string text = ir::ToString(func->body);
  EXPECT_NE(text.find("allocate acc[float32 * 96]"), std::string::npos) << text;
  EXPECT_NE(text.find("allocate acc[float32 * 80]"), std::string::npos) << text;
  EXPECT_NE(text.find("for (blk, 0, 36)"), std::string::npos) << text;
  EXPECT_EQ(text.find("for (owc"), std::string::npos) << text;
  // Kernels among the eight reduce orders (canonical indices); the orders
  // declared one kernel build the same code.
  auto reduce_kernels = [&](const Task& task) {
    std::map<int64_t, std::string> kernels;
    for (const char* reduce : {"c_kh_kw_ic", "c_kh_ic_kw", "kh_kw_c_ic", "c_kh_kw_ic_inline_pad",
                               "c_kh_ic_kw_inline_pad", "kh_kw_c_ic_inline_pad",
                               "icc_outer_kh_kw_ic", "icc_outer_kh_ic_kw"}) {
      auto config = with(task, 4, reduce);
      EXPECT_TRUE(config.ok()) << config.status();
      if (!config.ok()) continue;
      auto built = task.tmpl().Instantiate(task.workload(), *config);
      EXPECT_TRUE(built.ok()) << built.status();
      if (!built.ok()) continue;
      const std::string code = ir::ToString(built->body);
      auto [it, inserted] = kernels.emplace(task.space().CanonicalIndex(config->index()), code);
      EXPECT_EQ(it->second, code) << reduce << " is declared the same kernel as another order";
    }
    return kernels.size();
  };
  // Without taps or padding the six row orders are one, icc_outer's two one.
  EXPECT_EQ(reduce_kernels(**pointwise), 2u);
  auto unpadded3x3 = conv_task(3, 3, 1, 0), padded3x1 = conv_task(3, 1, 1, 1);
  ASSERT_TRUE(unpadded3x3.ok() && padded3x1.ok());
  EXPECT_EQ(reduce_kernels(**unpadded3x3), 5u);  // three orders, icc_outer's two
  EXPECT_EQ(reduce_kernels(**padded3x1), 5u);    // kw's loop is empty: c_kh_ic_kw is c_kh_kw_ic
  EXPECT_EQ(reduce_kernels(**padded3x3), 8u);
}

// Joining a pointwise convolution's rows changes no config index: a record
// written before (bench/results/compiled_model_records.jsonl) still fits.
TEST(TemplatesTest, PointwiseConvRecordsWrittenBeforeRowsWereJoinedStillFit) {
  auto task = Task::Make("conv2d_nchwc.x86", "conv2d_nchw",
                         {{"N", 1},
                          {"C", 144},
                          {"H", 28},
                          {"W", 28},
                          {"K", 32},
                          {"R", 1},
                          {"S", 1},
                          {"layout", "NCHWc"}},
                         "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  auto config = (*task)->space().FromJson(nlohmann::json::parse(R"({"index": 15741,
      "entity": [["tile_ic", "ot", 36], ["tile_oc", "ot", 16], ["tile_ow", "ot", 6],
                 ["vec", "ot", 16], ["reduce", "ot", "c_kh_ic_kw_inline_pad"]]})"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->index(), 15741);
}

TEST(TemplatesTest, OversizedConvRegisterTileIsRejectedWithTheReason) {
  auto task = Task::Make("", "conv2d_nchw",
                         {{"N", 1}, {"C", 64}, {"H", 56}, {"W", 56}, {"K", 64}, {"R", 3}, {"S", 3}},
                         "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  auto config = (*task)->space().FromJson({{"entity",
                                            {{"tile_ic", "ot", 16},
                                             {"tile_oc", "ot", 64},
                                             {"tile_ow", "ot", 32},
                                             {"vec", "ot", 4},
                                             {"reduce", "ot", "c_kh_kw_ic"}}}});
  ASSERT_TRUE(config.ok()) << config.status();
  auto func = (*task)->tmpl().Instantiate((*task)->workload(), *config);
  EXPECT_EQ(func.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(func.status().message().find("register tile 27x64 (tile_ow 32 on a row of 54) needs"),
            std::string::npos)
      << func.status();
}

// One config of dense_gemm.x86 for a 16 x 1024 x 1024 NK layer.
nlohmann::json DenseGemmConfig(int64_t mr, const std::string& pack_b, const std::string& kernel) {
  return {{"entity",
           {{"vec", "ot", 16},
            {"nr_vecs", "ot", 2},
            {"mr", "ot", mr},
            {"kc", "ot", 256},
            {"mc_panels", "ot", 1},
            {"nc_panels", "ot", 4},
            {"unroll_k", "ot", 4},
            {"pack_a", "ot", 0},
            {"order", "ot", "nm"},
            {"fuse", "ot", "nm"},
            {"pack_b", "ot", pack_b},
            {"kernel", "ot", kernel}}}};
}

TEST(TemplatesTest, DenseGemmPacksWeightsOnceInAnUntimedStage) {
  auto task = Task::Make("dense_gemm.x86", "dense", {{"M", 16}, {"N", 1024}, {"K", 1024}}, "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  // A 14 x 32 tile (28 of AVX-512's 32 registers) is in the space.
  auto once = (*task)->space().FromJson(DenseGemmConfig(14, "once", "panel"));
  ASSERT_TRUE(once.ok()) << once.status();
  auto func = (*task)->tmpl().Instantiate((*task)->workload(), *once);
  ASSERT_TRUE(func.ok()) << func.status();
  ASSERT_EQ(func->staged.size(), 1u);
  EXPECT_EQ(func->staged[0].name, "Bp");
  EXPECT_EQ(func->staged[0].num_elements, 1024 * 1024);
  ASSERT_TRUE(func->prepare.defined());
  EXPECT_NE(ir::ToString(func->prepare).find("pb_np"), std::string::npos);
  const std::string timed = ir::ToString(func->body);
  EXPECT_EQ(timed.find("pb_np"), std::string::npos) << timed;  // no packing of B when timed
  EXPECT_NE(timed.find("allocate acc[float32 * 448] in stack"), std::string::npos) << timed;
  // "call" packs B inside the timed body, as dense_pack.x86 does.
  auto call = (*task)->space().FromJson(DenseGemmConfig(14, "call", "panel"));
  ASSERT_TRUE(call.ok()) << call.status();
  auto per_call = (*task)->tmpl().Instantiate((*task)->workload(), *call);
  ASSERT_TRUE(per_call.ok()) << per_call.status();
  EXPECT_TRUE(per_call->staged.empty());
  EXPECT_FALSE(per_call->prepare.defined());
  EXPECT_NE(ir::ToString(per_call->body).find("pb_np"), std::string::npos);
}

TEST(TemplatesTest, DenseGemmPrefetchKnobEmitsPrefetchesAndOldRecordsReadAsNone) {
  auto task = Task::Make("dense_gemm.x86", "dense", {{"M", 16}, {"N", 1024}, {"K", 1024}}, "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  // A record written before the prefetch knob existed: no prefetch at all.
  auto old = (*task)->space().FromJson(DenseGemmConfig(14, "once", "panel"));
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(*old->GetInt("prefetch_b"), 0);
  auto plain = (*task)->tmpl().Instantiate((*task)->workload(), *old);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(ir::ToString(plain->body).find("prefetch"), std::string::npos);
  // B 16 k steps ahead, 2 lines per 32-float row, in each of the 4 unrolled
  // steps of the main loop and in the tail's step.
  nlohmann::json json = DenseGemmConfig(14, "once", "panel");
  json["entity"].push_back({"prefetch_b", "ot", 16});
  auto config = (*task)->space().FromJson(json);
  ASSERT_TRUE(config.ok()) << config.status();
  auto func = (*task)->tmpl().Instantiate((*task)->workload(), *config);
  ASSERT_TRUE(func.ok()) << func.status();
  const std::string text = ir::ToString(func->body);
  EXPECT_NE(text.find("unrolled for (pbl_m, 0, 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("unrolled for (pbl_t, 0, 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("prefetch Bp["), std::string::npos) << text;
  EXPECT_NE(text.find("+ 16)*32)"), std::string::npos) << text;  // (np*K + k + 16) * NR
  // The old record's index is the same config with the knob at 0.
  json["entity"][12][2] = 0;
  auto zero = (*task)->space().FromJson(json);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(zero->index(), old->index());
}

TEST(TemplatesTest, DenseGemmDotKernelPacksNothingAndSplitsN) {
  auto task = Task::Make("dense_gemm.x86", "dense", {{"M", 1}, {"N", 4096}, {"K", 4096}}, "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  auto config = (*task)->space().FromJson(DenseGemmConfig(1, "once", "dot"));
  ASSERT_TRUE(config.ok()) << config.status();
  auto func = (*task)->tmpl().Instantiate((*task)->workload(), *config);
  ASSERT_TRUE(func.ok()) << func.status();
  EXPECT_TRUE(func->staged.empty());  // pack_b does not apply: nothing is packed
  const std::string text = ir::ToString(func->body);
  EXPECT_EQ(text.find("Bp"), std::string::npos) << text;
  EXPECT_EQ(text.find("Ap"), std::string::npos) << text;
  // 1 x 2 tiles of 16-lane vectors; 2048 tiles of N in blocks of 4 run in parallel.
  EXPECT_NE(text.find("allocate acc[float32 * 32] in stack"), std::string::npos) << text;
  EXPECT_NE(text.find("parallel for (blk, 0, 512)"), std::string::npos) << text;
  EXPECT_NE(text.find("vectorized for"), std::string::npos);
}

TEST(TemplatesTest, DenseGemmDotConfigsThatDifferOnlyInInertKnobsAreOneKernel) {
  auto task = Task::Make("dense_gemm.x86", "dense", {{"M", 1}, {"N", 4096}, {"K", 4096}}, "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  nlohmann::json other = DenseGemmConfig(1, "call", "dot");
  other["entity"][3][2] = 1024;  // kc
  other["entity"][7][2] = 1;     // pack_a
  other["entity"].push_back({"prefetch_b", "ot", 16});
  auto a = (*task)->space().FromJson(DenseGemmConfig(1, "once", "dot"));
  auto b = (*task)->space().FromJson(other);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_NE(a->index(), b->index());
  auto fa = (*task)->tmpl().Instantiate((*task)->workload(), *a);
  auto fb = (*task)->tmpl().Instantiate((*task)->workload(), *b);
  ASSERT_TRUE(fa.ok() && fb.ok());
  // The same kernel, so the space declares them equivalent...
  EXPECT_EQ(ir::ToString(fa->body), ir::ToString(fb->body));
  EXPECT_TRUE(fa->staged.empty() && fb->staged.empty());
  EXPECT_FALSE(fa->prepare.defined() || fb->prepare.defined());
  const std::vector<int64_t> same = (*task)->space().EquivalentIndices(a->index());
  EXPECT_NE(std::find(same.begin(), same.end(), b->index()), same.end());
  EXPECT_EQ(same.size(),
            8u * 2 * 2 * 2);  // kc (8 up to 2048), pack_a, pack_b, prefetch_b
  // ...while the panel kernel uses every knob.
  auto panel = (*task)->space().FromJson(DenseGemmConfig(1, "once", "panel"));
  ASSERT_TRUE(panel.ok());
  EXPECT_EQ((*task)->space().EquivalentIndices(panel->index()).size(), 1u);
}

TEST(TemplatesTest, DenseGemmSpaceOffersTheDotKernelOnlyForNK) {
  auto nk = Task::Make("dense_gemm.x86", "dense", {{"M", 4}, {"N", 8}, {"K", 8}}, "llvm");
  auto kn = Task::Make("dense_gemm.x86", "dense", {{"M", 4}, {"N", 8}, {"K", 8}, {"layout", "KN"}},
                       "llvm");
  ASSERT_TRUE(nk.ok() && kn.ok());
  EXPECT_EQ((*nk)->space().size(), 2 * (*kn)->space().size());
  // The old template's space is unchanged: no pack_b, no kernel, mr <= 8.
  auto old = Task::Make("dense_pack.x86", "dense", {{"M", 4}, {"N", 8}, {"K", 8}}, "llvm");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ((*kn)->space().size(), 2 * (*old)->space().size() * 10 / 7);
}

TEST(TemplatesTest, DenseGemmOversizedDotTileIsRejectedWithTheReason) {
  auto task = Task::Make("dense_gemm.x86", "dense", {{"M", 16}, {"N", 64}, {"K", 256}}, "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  nlohmann::json json = DenseGemmConfig(16, "call", "dot");
  json["entity"][1][2] = 4;  // nr_vecs: 16 x 4 accumulators
  auto config = (*task)->space().FromJson(json);
  ASSERT_TRUE(config.ok()) << config.status();
  auto func = (*task)->tmpl().Instantiate((*task)->workload(), *config);
  EXPECT_EQ(func.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(func.status().message().find("dot tile 16x4"), std::string::npos) << func.status();
}

TEST(TemplatesTest, WrongWorkloadForTemplateIsInvalidArgument) {
  auto task = Task::Make("dense_pack.x86", "conv2d", {}, "llvm");
  EXPECT_FALSE(task.ok());
  auto bad_args = Task::Make("", "dense", {{"M", 0}, {"N", 4}, {"K", 4}}, "llvm");
  EXPECT_EQ(bad_args.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_args.status().message().find("\"M\""), std::string::npos);
}

// The "_inline_pad" reduce choices read the blocked input unpadded: no
// padding pass in the timed body, guarded taps only on border tiles.
TEST(TemplatesTest, Conv2dInlinePadReadsTheInputUnpadded) {
  auto task = Task::Make("", "conv2d_nchw",
                         {{"N", 1},
                          {"C", 64},
                          {"H", 56},
                          {"W", 56},
                          {"K", 128},
                          {"R", 3},
                          {"S", 3},
                          {"stride", 2},
                          {"padding", 1},
                          {"layout", "NCHWc"}},
                         "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  auto config_with = [&](const std::string& reduce) {
    return (*task)->space().FromJson({{"entity",
                                       {{"tile_ic", "ot", 16},
                                        {"tile_oc", "ot", 64},
                                        {"tile_ow", "ot", 7},
                                        {"vec", "ot", 16},
                                        {"reduce", "ot", reduce}}}});
  };
  auto copy = config_with("c_kh_kw_ic");
  auto inline_pad = config_with("c_kh_kw_ic_inline_pad");
  ASSERT_TRUE(copy.ok()) << copy.status();
  ASSERT_TRUE(inline_pad.ok()) << inline_pad.status();
  auto padded = (*task)->tmpl().Instantiate((*task)->workload(), *copy);
  auto unpadded = (*task)->tmpl().Instantiate((*task)->workload(), *inline_pad);
  ASSERT_TRUE(padded.ok()) << padded.status();
  ASSERT_TRUE(unpadded.ok()) << unpadded.status();
  EXPECT_NE(ir::ToString(padded->body).find("data_pad"), std::string::npos);
  const std::string text = ir::ToString(unpadded->body);
  EXPECT_EQ(text.find("data_pad"), std::string::npos) << text;
  EXPECT_NE(text.find("if ("), std::string::npos) << text;
  // The old choices keep their indices: the new ones are appended last.
  EXPECT_LT(copy->index(), inline_pad->index());
  // icc_outer_*: parallel over output-channel blocks only, the input-channel
  // blocks outside the rows, partial sums reloaded from the output.
  auto outer = config_with("icc_outer_kh_ic_kw");
  ASSERT_TRUE(outer.ok()) << outer.status();
  auto outer_func = (*task)->tmpl().Instantiate((*task)->workload(), *outer);
  ASSERT_TRUE(outer_func.ok()) << outer_func.status();
  const std::string outer_text = ir::ToString(outer_func->body);
  EXPECT_EQ(outer_text.find("data_pad"), std::string::npos) << outer_text;
  EXPECT_NE(outer_text.find("icco"), std::string::npos) << outer_text;
  EXPECT_LT(inline_pad->index(), outer->index());
}

// Which channel blocks a kernel copies (in_block): every block where it
// pads its input anyway; else those not a multiple of tile_ic or holding
// several groups' channels, which its reduction does not read in place.
TEST(TemplatesTest, Conv2dCopiesInputWherePaddedOrItsReductionCannotReadTheBlock) {
  auto task = Task::Make("conv2d_nchwc.x86", "conv2d_nchw",
                         {{"N", 1},
                          {"C", 48},
                          {"H", 14},
                          {"W", 14},
                          {"K", 48},
                          {"R", 3},
                          {"S", 3},
                          {"padding", 1},
                          {"group", 6},
                          {"layout", "NCHWc"}},
                         "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  auto copies = [&](const std::string& reduce, int64_t block) {
    auto config = (*task)->space().FromJson({{"entity",
                                              {{"tile_ic", "ot", 4},
                                               {"tile_oc", "ot", 8},
                                               {"tile_ow", "ot", 7},
                                               {"vec", "ot", 8},
                                               {"reduce", "ot", reduce}}}});
    EXPECT_TRUE(config.ok()) << config.status();
    return Conv2dNchwcCopiesInput((*task)->workload(), *config, block);
  };
  for (int64_t block : {1, 4, 16, 48}) {
    EXPECT_EQ(copies("c_kh_kw_ic", block).value_or(false), true) << block;
  }
  EXPECT_EQ(copies("c_kh_kw_ic_inline_pad", 4).value_or(true), false);
  EXPECT_EQ(copies("c_kh_kw_ic_inline_pad", 8).value_or(true), false);
  // 48 channels hold all six groups' 8: read in place, once per group.
  EXPECT_EQ(copies("c_kh_kw_ic_inline_pad", 48).value_or(false), true);
  EXPECT_EQ(copies("icc_outer_kh_ic_kw", 8).value_or(true), false);
  EXPECT_EQ(copies("icc_outer_kh_ic_kw", 16).value_or(false), true);
  EXPECT_EQ(copies("c_kh_kw_ic_inline_pad", 2).value_or(false), true);
  EXPECT_EQ(copies("c_kh_kw_ic_inline_pad", 3).value_or(false), true);
  EXPECT_EQ(copies("c_kh_kw_ic_inline_pad", 6).value_or(false), true);
  EXPECT_EQ(copies("c_kh_kw_ic_inline_pad", 5).status().code(), absl::StatusCode::kInvalidArgument);
  // in_block is the blocked templates' alone, and only for NCHWc.
  nlohmann::json nchw = (*task)->workload().args();
  nchw["layout"] = "NCHW";
  nchw["in_block"] = 16;
  EXPECT_EQ(Task::Make("conv2d_nchwc.x86", "conv2d_nchw", nchw, "llvm").status().code(),
            absl::StatusCode::kInvalidArgument);
  nlohmann::json cuda = (*task)->workload().args();
  cuda.erase("group");
  cuda["in_block"] = 16;
  EXPECT_EQ(Task::Make("conv2d_direct.cuda", "conv2d_nchw", cuda, "cuda").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunefleet

#include "tuner_core/records/tvm_workload.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

nlohmann::json J(const char* text) { return nlohmann::json::parse(text); }

// The reason WorkloadFromTvmTask gives, or "" when it maps.
std::string Why(const std::string& task, const char* args) {
  absl::StatusOr<WorkloadOfTvmTask> w = WorkloadFromTvmTask(task, J(args));
  if (w.ok()) return "";
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(w.status().message());
}

TEST(TvmWorkloadTest, DenseTasksMapToDenseNk) {
  for (const char* task : {"dense_nopack.x86", "dense_pack.x86", "dense_small_batch.gpu"}) {
    absl::StatusOr<WorkloadOfTvmTask> w = WorkloadFromTvmTask(
        task, J(R"([["TENSOR", [16, 512], "float32"], ["TENSOR", [1000, 512], "float32"],
                   null, "float32"])"));
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->workload_name, "dense");
    EXPECT_EQ(w->workload_args, J(R"({"M": 16, "N": 1000, "K": 512, "layout": "NK"})"));
  }
  // Trailing defaults may be left out; out_dtype "" means the input's.
  EXPECT_EQ(Why("dense_nopack.x86", R"([["TENSOR", [1, 8], "float32"], ["TENSOR", [4, 8],
                                        "float32"]])"),
            "");
  EXPECT_EQ(Why("dense_nopack.x86", R"([["TENSOR", [1, 8], "float32"], ["TENSOR", [4, 8],
                                        "float32"], null, ""])"),
            "");
}

TEST(TvmWorkloadTest, DenseRefusesWhatOurWorkloadCannotExpress) {
  EXPECT_THAT(Why("dense_nopack.x86", R"([["TENSOR", [1, 8], "float32"],
                   ["TENSOR", [4, 9], "float32"], null, "float32"])"),
              HasSubstr("does not match data"));
  EXPECT_THAT(Why("dense_nopack.x86", R"([["TENSOR", [1, 8], "float32"],
                   ["TENSOR", [4, 8], "float32"], ["TENSOR", [4], "float32"], "float32"])"),
              HasSubstr("bias"));
  EXPECT_THAT(Why("dense_nopack.x86", R"([["TENSOR", [1, 8], "float32"],
                   ["TENSOR", [4, 8], "float32"], null, "int32"])"),
              HasSubstr("out_dtype"));
  EXPECT_THAT(Why("dense_nopack.x86", R"([["TENSOR", [1, 8], "float16"],
                   ["TENSOR", [4, 8], "float32"], null, "float32"])"),
              HasSubstr("dtype float16"));
  EXPECT_THAT(Why("dense_nopack.x86", R"([["TENSOR", [1, 8], "float32"]])"),
              HasSubstr("takes 2..4 arguments, the record has 1"));
  EXPECT_THAT(Why("dense_nopack.x86", R"([["TENSOR", [1, 8, 2], "float32"],
                   ["TENSOR", [4, 8], "float32"]])"),
              HasSubstr("expected a 2-D tensor"));
}

TEST(TvmWorkloadTest, BatchMatmulLayoutsFollowTransposeB) {
  absl::StatusOr<WorkloadOfTvmTask> nt =
      WorkloadFromTvmTask("batch_matmul.x86", J(R"([["TENSOR", [12, 128, 64], "float32"],
                                ["TENSOR", [12, 32, 64], "float32"], null, "float32",
                                false, true])"));
  ASSERT_TRUE(nt.ok()) << nt.status();
  EXPECT_EQ(nt->workload_name, "batch_matmul");
  EXPECT_EQ(nt->workload_args, J(R"({"B": 12, "M": 128, "N": 32, "K": 64, "layout": "NK"})"));

  absl::StatusOr<WorkloadOfTvmTask> nn = WorkloadFromTvmTask(
      "batch_matmul.cuda", J(R"([["TENSOR", [2, 8, 4], "float32"], ["TENSOR", [2, 4, 16],
                                 "float32"], [2, 8, 16], "float32", false, false])"));
  ASSERT_TRUE(nn.ok()) << nn.status();
  EXPECT_EQ(nn->workload_args, J(R"({"B": 2, "M": 8, "N": 16, "K": 4, "layout": "KN"})"));

  EXPECT_THAT(Why("batch_matmul.x86", R"([["TENSOR", [2, 4, 8], "float32"],
                   ["TENSOR", [2, 16, 4], "float32"], null, "float32", true, true])"),
              HasSubstr("transpose_a"));
  EXPECT_THAT(Why("batch_matmul.x86", R"([["TENSOR", [2, 8, 4], "float32"],
                   ["TENSOR", [1, 16, 4], "float32"]])"),
              HasSubstr("broadcast"));
  EXPECT_THAT(Why("batch_matmul.x86", R"([["TENSOR", [2, 8, 4], "float32"],
                   ["TENSOR", [2, 16, 4], "float32"], [2, 8, 17], "float32"])"),
              HasSubstr("out_shape"));
}

TEST(TvmWorkloadTest, ConvPaddingStridesAndDilationReadLikeGetPadTuple) {
  // padding [1, 2] = top/bottom 1, left/right 2; stride 2 for both axes.
  absl::StatusOr<WorkloadOfTvmTask> conv =
      WorkloadFromTvmTask("conv2d_NCHWc.x86", J(R"([["TENSOR", [1, 3, 224, 224], "float32"],
                                ["TENSOR", [64, 3, 7, 7], "float32"], 2, [3, 2], [1, 1],
                                "NCHW", "NCHW", "float32"])"));
  ASSERT_TRUE(conv.ok()) << conv.status();
  EXPECT_EQ(conv->workload_name, "conv2d_nchw");
  const nlohmann::json& a = conv->workload_args;
  EXPECT_EQ(a["K"], 64);
  EXPECT_EQ(a["stride_h"], 2);
  EXPECT_EQ(a["stride_w"], 2);
  EXPECT_EQ(a["pad_top"], 3);
  EXPECT_EQ(a["pad_left"], 2);
  EXPECT_EQ(a["pad_bottom"], 3);
  EXPECT_EQ(a["pad_right"], 2);

  absl::StatusOr<WorkloadOfTvmTask> four =
      WorkloadFromTvmTask("conv2d_nchw.cuda", J(R"([["TENSOR", [1, 8, 10, 10], "float32"],
                                ["TENSOR", [16, 8, 3, 3], "float32"], [1, 1], [0, 1, 2, 1],
                                2, "float32"])"));
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_EQ(four->workload_args["pad_top"], 0);
  EXPECT_EQ(four->workload_args["pad_left"], 1);
  EXPECT_EQ(four->workload_args["pad_bottom"], 2);
  EXPECT_EQ(four->workload_args["dil_h"], 2);
}

TEST(TvmWorkloadTest, ConvRefusesBlockedLayoutsGroupsAndMultipliers) {
  EXPECT_THAT(Why("conv2d_NCHWc.x86", R"([["TENSOR", [1, 8, 8, 8, 8], "float32"],
                   ["TENSOR", [8, 8, 3, 3, 8, 8], "float32"], 1, 1, 1, "NCHW8c", "NCHW8c",
                   "float32"])"),
              HasSubstr("layout"));
  EXPECT_THAT(Why("conv2d_nchw.cuda", R"([["TENSOR", [1, 8, 8, 8], "float32"],
                   ["TENSOR", [8, 4, 3, 3], "float32"], 1, 1, 1, "float32"])"),
              HasSubstr("grouped"));
  EXPECT_THAT(Why("depthwise_conv2d_nchw.cuda", R"([["TENSOR", [1, 8, 8, 8], "float32"],
                   ["TENSOR", [8, 2, 3, 3], "float32"], 1, 1, 1, "float32"])"),
              HasSubstr("channel multiplier 1"));
  EXPECT_THAT(Why("conv2d_nchw.cuda", R"([["TENSOR", [1, 8, 8, 8], "float32"],
                   ["TENSOR", [8, 8, 3, 3], "float32"], 1, "SAME", 1, "float32"])"),
              HasSubstr("padding"));
  // Values the workload itself refuses: padding as large as the kernel.
  EXPECT_THAT(Why("conv2d_nchw.cuda", R"([["TENSOR", [1, 8, 8, 8], "float32"],
                   ["TENSOR", [8, 8, 3, 3], "float32"], 1, 3, 1, "float32"])"),
              HasSubstr("do not make a conv2d_nchw workload"));

  absl::StatusOr<WorkloadOfTvmTask> depthwise = WorkloadFromTvmTask(
      "depthwise_conv2d_NCHWc.x86", J(R"([["TENSOR", [1, 32, 112, 112], "float32"],
                                          ["TENSOR", [32, 1, 3, 3], "float32"], [1, 1],
                                          [1, 1, 1, 1], [1, 1], "NCHW", "NCHW", "float32"])"));
  ASSERT_TRUE(depthwise.ok()) << depthwise.status();
  EXPECT_EQ(depthwise->workload_name, "depthwise_conv2d_nchw");
  EXPECT_FALSE(depthwise->workload_args.contains("K"));
}

TEST(TvmWorkloadTest, UnknownTaskListsTheKnownOnes) {
  std::string why = Why("conv2d_nhwc.x86", "[]");
  EXPECT_THAT(why, HasSubstr("\"conv2d_nhwc.x86\" has no TuneFleet workload"));
  EXPECT_THAT(why, HasSubstr("dense_nopack.x86"));
  EXPECT_THAT(Why("dense_nopack.x86", R"({"M": 1})"), HasSubstr("must be a list"));
}

}  // namespace
}  // namespace tunefleet

// The operator table: every entry is well formed, attributes outside an
// entry's list are refused by name, and pointwise parameters (Clip's
// omitted bounds included) come out as ONNX defines them.
#include "compiler/operator_table.h"

#include <cmath>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

TEST(OperatorTableTest, EveryEntryIsWellFormedAndListedOnce) {
  std::set<std::string> seen;
  for (const OperatorInfo& info : OperatorTable()) {
    EXPECT_TRUE(seen.insert(info.op_type).second) << info.op_type << " listed twice";
    if (info.lowering == OpLowering::kTensorOp || info.lowering == OpLowering::kAdd) {
      EXPECT_NE(info.lower, nullptr) << info.op_type;
    }
    if (info.lowering == OpLowering::kPointwise) {
      EXPECT_NE(info.func, PointwiseFunc::kNone) << info.op_type;
      EXPECT_TRUE(info.fuses_into_epilogue) << info.op_type;
    }
    EXPECT_THAT(SupportedOperatorList(), HasSubstr(info.op_type));
  }
  EXPECT_EQ(FindOperator("LSTM"), nullptr);
}

TEST(OperatorTableTest, AnUnsupportedAttributeIsRefusedByName) {
  GraphNode pool{"pool", "MaxPool", {"x"}, {"y"}};
  pool.attributes["kernel_shape"] = {2, 2};
  EXPECT_TRUE(CheckAttributes(pool, *FindOperator("MaxPool")).ok());
  pool.attributes["made_up"] = 1;
  const absl::Status status = CheckAttributes(pool, *FindOperator("MaxPool"));
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("node 'pool' (MaxPool): attribute 'made_up'"));
  const absl::Status unknown = UnsupportedOperatorError({"l", "LSTM", {"x"}, {"y"}});
  EXPECT_THAT(unknown.message(), HasSubstr("operator 'LSTM' is not supported"));
}

TEST(OperatorTableTest, ClipBoundsFromAttributesInputsOrNeither) {
  Graph g;
  g.constants["lo"].shape = {kOnnxFloat, {}};
  g.constants["lo"].f32 = {-1};
  const OperatorInfo& clip = *FindOperator("Clip");
  absl::StatusOr<Activation> a = ActivationOf(g, {"c", "Clip", {"x", "lo"}, {"y"}}, clip);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->alpha, -1);
  EXPECT_TRUE(std::isinf(a->beta) && a->beta > 0);  // max omitted
  a = ActivationOf(g, {"c", "Clip", {"x", "", "lo"}, {"y"}}, clip);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(std::isinf(a->alpha) && a->alpha < 0);  // min omitted
  EXPECT_EQ(a->beta, -1);
  GraphNode old_clip{"c", "Clip", {"x"}, {"y"}};
  old_clip.attributes["min"] = 0.0;
  old_clip.attributes["max"] = 6.0;
  a = ActivationOf(g, old_clip, clip);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->alpha, 0);
  EXPECT_EQ(a->beta, 6);
  a = ActivationOf(g, {"c", "Clip", {"x", "not_constant"}, {"y"}}, clip);
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("node 'c' (Clip)"));
}

TEST(OperatorTableTest, LeakyReluAndEluDefaults) {
  Graph g;
  absl::StatusOr<Activation> a =
      ActivationOf(g, {"l", "LeakyRelu", {"x"}, {"y"}}, *FindOperator("LeakyRelu"));
  ASSERT_TRUE(a.ok());
  EXPECT_FLOAT_EQ(a->alpha, 0.01f);
  a = ActivationOf(g, {"e", "Elu", {"x"}, {"y"}}, *FindOperator("Elu"));
  ASSERT_TRUE(a.ok());
  EXPECT_FLOAT_EQ(a->alpha, 1.0f);
}

}  // namespace
}  // namespace tunefleet

// The code generator's lane window (codegen_llvm.h LoadLaneWindow): a
// vector load whose lanes are constant offsets from one scalar becomes one
// window of the buffer and a shuffle, masked so that nothing past its last
// offset is read; wider spans stay per-lane loads.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "toolchain/codegen/codegen_targets.h"
#include "toolchain/codegen/llvm_backend.h"
#include "toolchain/codegen/target.h"
#include "toolchain/lower.h"
#include "tuner_core/ir/ir.h"

namespace tunefleet {
namespace {

using namespace ir;  // NOLINT

// The unoptimised LLVM IR of out[l] = a[index(l)] over 16 vectorised lanes
// on an AVX-512 target.
std::string GatherIR(const std::function<Expr(Expr)>& index) {
  LoweredFunc func;
  func.name = "tf_lane_window";
  func.args = {{"a", {64}, false}, {"out", {16}, true}};
  Expr l = Var::Make("l");
  func.body =
      For::Make("l", 0, 16, ForKind::kVectorized, Store::Make("out", Load::Make("a", index(l)), l));
  absl::StatusOr<LoweredFunc> lowered = Lower(func);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<TargetSpec> target = ParseTarget("llvm -mcpu=znver4");
  EXPECT_TRUE(target.ok()) << target.status();
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module = CodegenLLVM(*lowered, *target, context);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? ModuleToString(**module) : "";
}

constexpr const char* kMaskedLoadCall = "@llvm.masked.load.v16f32.p0(ptr %";

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(LaneWindowTest, LanesOfWholeGroupsLoadOneMaskedWindow) {
  // Lane l reads channel 3 of its group of 4 (group_conv2d_nchwc.x86):
  // offsets 3, 3, 3, 3, 7, ..., 15: 13 floats, the 3 after them unread.
  const std::string ir = GatherIR([](Expr l) { return (l / 4) * 4 + 3; });
  EXPECT_EQ(Count(ir, kMaskedLoadCall), 1) << ir;
  EXPECT_NE(ir.find("i1 true, i1 false, i1 false, i1 false>"), std::string::npos) << ir;
  EXPECT_EQ(Count(ir, "shufflevector <16 x float>"), 1) << ir;
  EXPECT_EQ(Count(ir, "load float"), 0) << ir;
}

TEST(LaneWindowTest, AStrideOfTwoLoadsAVectorAndAMaskedRest) {
  const std::string ir = GatherIR([](Expr l) { return l * 2 + 1; });  // 31 floats
  EXPECT_EQ(Count(ir, "load <16 x float>"), 1) << ir;
  EXPECT_EQ(Count(ir, kMaskedLoadCall), 1) << ir;
  EXPECT_EQ(Count(ir, "load float"), 0) << ir;
}

TEST(LaneWindowTest, OneOffsetForEveryLaneIsABroadcast) {
  const std::string ir = GatherIR([](Expr l) { return l / 16 + 5; });
  EXPECT_EQ(Count(ir, "load float"), 1) << ir;
  EXPECT_EQ(Count(ir, "masked.load"), 0) << ir;
}

TEST(LaneWindowTest, SparseLanesStayOneLoadEach) {
  const std::string ir =
      GatherIR([](Expr l) { return l * 3; });  // 46 floats: wider than two vectors
  EXPECT_EQ(Count(ir, "load float"), 16) << ir;
  EXPECT_EQ(Count(ir, "masked.load"), 0) << ir;
}

}  // namespace
}  // namespace tunefleet

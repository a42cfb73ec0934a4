#include "tuner_core/features/loop_nest_analysis.h"

#include "gtest/gtest.h"

namespace tunefleet::features {
namespace {

using namespace ir;  // NOLINT

// parallel i < 8, k < 16, vectorized j < 4: C[i*4+j] += A[i*16+k] * B[k*4+j]
LoweredFunc SmallMatmul() {
  Expr i = Var::Make("i"), k = Var::Make("k"), j = Var::Make("j");
  Stmt update = Store::Make(
      "C", Load::Make("C", i * 4 + j) + Load::Make("A", i * 16 + k) * Load::Make("B", k * 4 + j),
      i * 4 + j);
  Stmt nest = For::Make(
      "i", 0, 8, ForKind::kParallel,
      For::Make("k", 0, 16, ForKind::kSerial, For::Make("j", 0, 4, ForKind::kVectorized, update)));
  LoweredFunc func;
  func.name = "small";
  func.body = nest;
  return func;
}

const BufferTouch& TouchOf(const LoopNestAnalysis& nest, int loop, const std::string& buffer) {
  for (const BufferTouch& t : nest.loops[loop].touches) {
    if (nest.buffers[t.buffer] == buffer) return t;
  }
  static const BufferTouch kNone;
  ADD_FAILURE() << "loop " << loop << " does not touch " << buffer;
  return kNone;
}

TEST(LoopNestAnalysisTest, CountsAccessesBytesStridesAndReusePerLoop) {
  absl::StatusOr<LoopNestAnalysis> nest = AnalyzeLoopNest(SmallMatmul());
  ASSERT_TRUE(nest.ok()) << nest.status();
  ASSERT_EQ(nest->loops.size(), 3u);
  EXPECT_EQ(nest->loops[0].extent, 8);
  EXPECT_EQ(nest->loops[0].kind, ForKind::kParallel);
  EXPECT_EQ(nest->loops[1].depth, 1);
  EXPECT_DOUBLE_EQ(nest->loops[2].iterations, 8 * 16 * 4);

  // Innermost j: C is loaded and stored (8 accesses) over 4 floats, A is one float.
  EXPECT_DOUBLE_EQ(TouchOf(*nest, 2, "C").accesses, 8);
  EXPECT_DOUBLE_EQ(TouchOf(*nest, 2, "C").bytes, 16);
  EXPECT_DOUBLE_EQ(TouchOf(*nest, 2, "C").stride, 1);
  EXPECT_DOUBLE_EQ(TouchOf(*nest, 2, "A").bytes, 4);
  EXPECT_DOUBLE_EQ(TouchOf(*nest, 2, "A").stride, 0);
  // k: B rows of 4 floats, 16 of them; stride 4 in k.
  EXPECT_DOUBLE_EQ(TouchOf(*nest, 1, "B").bytes, 256);
  EXPECT_DOUBLE_EQ(TouchOf(*nest, 1, "B").stride, 4);
  EXPECT_DOUBLE_EQ(TouchOf(*nest, 1, "C").stride, 0);
  // i: all of B is reused by each of the 8 rows.
  EXPECT_DOUBLE_EQ(TouchOf(*nest, 0, "B").accesses, 512);
  EXPECT_DOUBLE_EQ(TouchOf(*nest, 0, "B").bytes, 256);
  EXPECT_DOUBLE_EQ(TouchOf(*nest, 0, "B").Reuse(), 8);
  EXPECT_DOUBLE_EQ(TouchOf(*nest, 0, "A").bytes, 8 * 16 * 4);
}

TEST(LoopNestAnalysisTest, BoundsExtentsThatDependOnOuterLoopsAndResolvesLets) {
  // kb < 3: let base = kb * 100; k < min(100, 250 - kb*100): X[base + k]
  Expr kb = Var::Make("kb"), k = Var::Make("k"), base = Var::Make("base");
  Stmt inner = For::Make("k", 0, Min(Expr(100), Expr(250) - kb * 100), ForKind::kSerial,
                         Store::Make("X", 0.0, base + k));
  LoweredFunc func;
  func.name = "ragged";
  func.body = For::Make("kb", 0, 3, ForKind::kSerial, LetStmt::Make("base", kb * 100, inner));
  absl::StatusOr<LoopNestAnalysis> nest = AnalyzeLoopNest(func);
  ASSERT_TRUE(nest.ok()) << nest.status();
  ASSERT_EQ(nest->loops.size(), 2u);
  EXPECT_EQ(nest->loops[1].extent, 100);
  // The let makes X's index depend on kb with stride 100.
  EXPECT_DOUBLE_EQ(TouchOf(*nest, 0, "X").stride, 100);
  EXPECT_DOUBLE_EQ(TouchOf(*nest, 0, "X").bytes, 300 * 4);
}

TEST(LoopNestAnalysisTest, MissingBodyIsInvalidArgument) {
  LoweredFunc func;
  func.name = "empty";
  EXPECT_EQ(AnalyzeLoopNest(func).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LoopNestAnalysisTest, TooDeepNestIsInvalidArgument) {
  Stmt body = Store::Make("X", 0.0, 0);
  for (int d = 0; d <= kMaxLoopDepth; ++d)
    body = For::Make("v" + std::to_string(d), 0, 2, ForKind::kSerial, body);
  LoweredFunc func;
  func.name = "deep";
  func.body = body;
  EXPECT_EQ(AnalyzeLoopNest(func).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunefleet::features

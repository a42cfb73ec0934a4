#include "gtest/gtest.h"
#include "toolchain/passes/fuse_epilogue.h"
#include "toolchain/passes/unroll_loops.h"
#include "toolchain/passes/vectorize_loops.h"
#include "tuner_core/ir/final_store.h"
#include "tuner_core/ir/ir_printer.h"

namespace tunefleet {
namespace {

using namespace ir;  // NOLINT

TEST(VectorizeLoopsTest, UnitStrideAccessBecomesRampLoadAndStore) {
  Expr j = Var::Make("j"), r = Var::Make("r");
  Stmt s =
      For::Make("j", 0, 8, ForKind::kVectorized,
                Store::Make("C", Load::Make("A", r * 64 + j) * Load::Make("S", r), r * 64 + j));
  auto v = VectorizeLoops(s);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(ToString(*v), "C[ramp((r*64), 1, 8)] = (A[ramp((r*64), 1, 8)]*x8(S[r]))\n");
}

TEST(VectorizeLoopsTest, PrefetchInAVectorizedLoopFetchesTheFirstLanesLine) {
  Expr j = Var::Make("j"), r = Var::Make("r");
  Stmt s = For::Make("j", 0, 8, ForKind::kVectorized,
                     Block::Make({Prefetch::Make("A", r * 64 + j + 128),
                                  Store::Make("C", Load::Make("A", r * 64 + j), r * 64 + j)}));
  auto v = VectorizeLoops(s);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(ToString(*v),
            "prefetch A[((r*64) + 128)]\nC[ramp((r*64), 1, 8)] = A[ramp((r*64), 1, 8)]\n");
  // A non-affine index (j * j) has no one line to fetch.
  Stmt gather = For::Make("j", 0, 8, ForKind::kVectorized, Prefetch::Make("A", j * j));
  auto g = VectorizeLoops(gather);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("prefetch of A"), std::string::npos) << g.status();
}

TEST(VectorizeLoopsTest, CastOfALaneDependentLoadBecomesAVectorCast) {
  // An index loaded from another buffer (a gather): the mutator rebuilds the
  // cast with the loaded vector's lanes.
  Expr j = Var::Make("j");
  Stmt s =
      For::Make("j", 0, 8, ForKind::kVectorized,
                Store::Make("C", Load::Make("A", Cast::Make(Type::Int(), Load::Make("I", j))), j));
  auto v = VectorizeLoops(s);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(ToString(*v), "C[ramp(0, 1, 8)] = A[int64x8(I[ramp(0, 1, 8)])]\n");
}

TEST(VectorizeLoopsTest, ReductionAcrossLanesIsRejectedWithReason) {
  Expr j = Var::Make("j");
  Stmt s = For::Make("j", 0, 8, ForKind::kVectorized,
                     Store::Make("sum", Load::Make("sum", 0) + Load::Make("A", j), 0));
  auto v = VectorizeLoops(s);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(v.status().message().find("reduces across the vectorized loop 'j'"), std::string::npos)
      << v.status();
}

TEST(VectorizeLoopsTest, LaneDependentConditionIsRejected) {
  Expr j = Var::Make("j");
  Stmt s =
      For::Make("j", 0, 4, ForKind::kVectorized, IfThenElse::Make(j < 3, Store::Make("A", 0.0, j)));
  EXPECT_FALSE(VectorizeLoops(s).ok());
}

TEST(VectorizeLoopsTest, NonConstantExtentIsRejected) {
  Stmt s = For::Make("j", 0, Var::Make("n"), ForKind::kVectorized,
                     Store::Make("A", 0.0, Var::Make("j")));
  auto v = VectorizeLoops(s);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("non-constant extent"), std::string::npos);
}

TEST(UnrollLoopsTest, ReplicatesBodyWithConstants) {
  Stmt s = For::Make("i", 2, 3, ForKind::kUnrolled, Store::Make("A", 1.0, Var::Make("i") * 2));
  auto u = UnrollLoops(s);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(ToString(*u), "A[4] = 1f\nA[6] = 1f\nA[8] = 1f\n");
}

TEST(UnrollLoopsTest, ExtentAboveLimitIsRejected) {
  Stmt s = For::Make("i", 0, 1000, ForKind::kUnrolled, Store::Make("A", 1.0, Var::Make("i")));
  auto u = UnrollLoops(s, 256);
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("above the limit"), std::string::npos);
}

// A kernel writing C[j] = A[j] for j < 4, its stores marked final for
// channel j % 2 (on the last of two passes where `when`).
LoweredFunc MarkedKernel(bool second_unmarked_store, bool with_when) {
  Expr j = Var::Make("j"), pass = Var::Make("pass");
  Stmt store = FinalStore("C", Load::Make("A", j), j, j % 2, with_when ? EQ(pass, 1) : Expr());
  Stmt body = For::Make("j", 0, 4, ForKind::kSerial, store);
  if (with_when) body = For::Make("pass", 0, 2, ForKind::kSerial, body);
  if (second_unmarked_store) body = Block::Make({body, Store::Make("C", 0.0, 0)});
  LoweredFunc func;
  func.body = body;
  return func;
}

TEST(FuseEpilogueTest, MarkedStoresComputeTheEpilogue) {
  LoweredFunc func = MarkedKernel(false, false);
  StoreEpilogue e{
      .buffer = "C", .bias = true, .residual = true, .activation = StoreActivation::kRelu};
  EXPECT_TRUE(FuseEpilogueIntoStores(&func, &e));
  EXPECT_EQ(func.epilogue_inputs,
            (std::vector<std::string>{kEpilogueBiasArg, kEpilogueResidualArg}));
  const std::string text = ToString(func.body);
  EXPECT_NE(text.find("epilogue_bias[(j % 2)]"), std::string::npos) << text;
  EXPECT_NE(text.find("epilogue_residual[j]"), std::string::npos) << text;
  EXPECT_EQ(text.find("final_store"), std::string::npos) << text;
}

TEST(FuseEpilogueTest, AStoreFinalOnlyOnTheLastPassKeepsThePlainStoreBefore) {
  LoweredFunc func = MarkedKernel(false, true);
  StoreEpilogue e{.buffer = "C", .bias = true};
  EXPECT_TRUE(FuseEpilogueIntoStores(&func, &e));
  const std::string text = ToString(func.body);
  EXPECT_NE(text.find("if ((pass == 1))"), std::string::npos) << text;
  EXPECT_EQ(func.epilogue_inputs, std::vector<std::string>{kEpilogueBiasArg});
}

TEST(FuseEpilogueTest, AnUnmarkedStoreToTheOutputKeepsThePass) {
  LoweredFunc func = MarkedKernel(true, false);
  StoreEpilogue e{.buffer = "C", .bias = true};
  EXPECT_FALSE(FuseEpilogueIntoStores(&func, &e));
  EXPECT_TRUE(func.epilogue_inputs.empty());
  const std::string text = ToString(func.body);
  EXPECT_EQ(text.find("epilogue_bias"), std::string::npos) << text;
  EXPECT_EQ(text.find("final_store"), std::string::npos) << text;
}

TEST(FuseEpilogueTest, MarksAreRemovedWithoutAnEpilogue) {
  LoweredFunc func = MarkedKernel(false, true);
  EXPECT_FALSE(FuseEpilogueIntoStores(&func, nullptr));
  EXPECT_EQ(ToString(RemoveFinalStoreMarks(MarkedKernel(false, false).body)),
            "serial for (j, 0, 4) {\n  C[j] = A[j]\n}\n");
}

}  // namespace
}  // namespace tunefleet

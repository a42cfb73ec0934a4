#include "tuner_core/ir/ir.h"

#include <set>
#include <string>

#include "gtest/gtest.h"
#include "tuner_core/ir/ir_mutator.h"
#include "tuner_core/ir/ir_printer.h"
#include "tuner_core/ir/ir_visitor.h"

namespace tunefleet::ir {
namespace {

TEST(IRTest, IntegerConstantsFoldAndIdentitiesSimplify) {
  Expr x = Var::Make("x");
  EXPECT_EQ(*AsConstInt(Expr(3) * 4 + 2), 14);
  EXPECT_TRUE((x + 0).same_as(x));
  EXPECT_TRUE((x * 1).same_as(x));
  EXPECT_EQ(*AsConstInt(x * 0), 0);
  EXPECT_TRUE((x / 1).same_as(x));
  EXPECT_EQ(*AsConstInt(x % 1), 0);
  EXPECT_EQ(ToString(x % 2), "(x % 2)");
  EXPECT_EQ(ToString(x * 4 + 1), "((x*4) + 1)");
}

TEST(IRTest, ScalarMeetingVectorIsBroadcast) {
  Expr ramp = Ramp::Make(Var::Make("b"), 1, 8);
  Expr sum = ramp + Var::Make("c");
  EXPECT_EQ(sum.type(), Type::Int(8));
  const BinaryOp* add = static_cast<const BinaryOp*>(sum.get());
  EXPECT_NE(add->b.as<Broadcast>(), nullptr);
  EXPECT_EQ(Load::Make("A", ramp).type(), Type::Float(8));
  EXPECT_EQ((ramp < 4).type(), Type::Bool(8));
}

TEST(IRTest, SubstituteRespectsShadowingLoops) {
  Stmt inner = For::Make("i", 0, 4, ForKind::kSerial, Store::Make("A", 1.0, Var::Make("i")));
  Stmt outer = Block::Make({Store::Make("A", 2.0, Var::Make("i")), inner});
  Stmt replaced = Substitute(outer, "i", Expr(7));
  const std::string text = ToString(replaced);
  EXPECT_NE(text.find("A[7] = 2f"), std::string::npos) << text;
  EXPECT_NE(text.find("A[i] = 1f"), std::string::npos) << text;
}

TEST(IRTest, BlockFlattensAndDropsUndefined) {
  Stmt a = Store::Make("A", 1.0, 0), b = Store::Make("A", 2.0, 1);
  Stmt block = Block::Make({Block::Make({a, b}), Stmt(), a});
  ASSERT_NE(block.as<Block>(), nullptr);
  EXPECT_EQ(block.as<Block>()->stmts.size(), 3u);
  EXPECT_TRUE(Block::Make({a, Stmt()}).same_as(a));
}

class CountLoads : public IRVisitor {
 public:
  int loads = 0;

 protected:
  void VisitLoad(const Load* op) override {
    ++loads;
    IRVisitor::VisitLoad(op);
  }
};

TEST(IRTest, VisitorReachesEveryLoad) {
  Expr k = Var::Make("k");
  Stmt s = For::Make(
      "k", 0, 8, ForKind::kSerial,
      Store::Make(
          "C",
          Load::Make("C", 0) +
              Load::Make("A", k) * Load::Make("B", k + Cast::Make(Type::Int(), Load::Make("I", k))),
          0));
  CountLoads count;
  count.Visit(s);
  EXPECT_EQ(count.loads, 4);
}

// One tree holding every node kind of the list in ir.h at least once.
Stmt EveryKindTree() {
  Expr i = Var::Make("i"), f = Load::Make("A", i);
  Expr all_binary_ints = Min(Max((i + 1 - 2) * 3 / 4 % 5, i), i);
  Expr condition = (EQ(i, 0) || NE(i, 1)) && !(i < 2) && i <= 9;
  Expr value =
      Select::Make(condition, Exp::Make(f), Cast::Make(Type::Float(), all_binary_ints)) + 1.5;
  Stmt vector_store = Store::Make("B", Broadcast::Make(value, 4), Ramp::Make(i * 4, 1, 4));
  Stmt body = Block::Make({Store::Make("B", value, i), vector_store, Barrier::Make(),
                           Prefetch::Make("B", i + Cast::Make(Type::Int(), f)),
                           OutputReady::Make("B", i * 4, 1, 4, 0)});
  return Allocate::Make("S", 16, MemoryScope::kShared,
                        For::Make("i", 0, 8, ForKind::kSerial,
                                  LetStmt::Make("j", i, IfThenElse::Make(condition, body, body))));
}

// Counts the kinds it meets through the generated dispatch.
class KindCounter : public IRVisitor {
 public:
  std::set<IRNodeKind> seen;

 protected:
#define TUNEFLEET_IR_COUNT(name, node)        \
  void Visit##name(const node* op) override { \
    seen.insert(IRNodeKind::k##name);         \
    IRVisitor::Visit##name(op);               \
  }
  TUNEFLEET_IR_EXPR_KINDS(TUNEFLEET_IR_COUNT)
  TUNEFLEET_IR_STMT_KINDS(TUNEFLEET_IR_COUNT)
#undef TUNEFLEET_IR_COUNT
};

TEST(IRTest, KindListNamesEveryEnumeratorOnce) {
  static_assert(kNumIRNodeKinds == kNumExprKinds + kNumStmtKinds);
  static_assert(kNumExprKinds == 23 && kNumStmtKinds == 9,
                "a kind was added: give it a visit everywhere, then update this count");
  std::set<std::string> names;
  for (int k = 0; k < kNumIRNodeKinds; ++k) {
    const IRNodeKind kind = static_cast<IRNodeKind>(k);
    names.insert(IRNodeKindName(kind));
    EXPECT_EQ(IsExprKind(kind), k < kNumExprKinds) << IRNodeKindName(kind);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kNumIRNodeKinds));
  EXPECT_EQ(names.count("?"), 0u);
}

TEST(IRTest, VisitorDispatchReachesEveryKind) {
  KindCounter counter;
  counter.Visit(EveryKindTree());
  EXPECT_EQ(counter.seen.size(), static_cast<size_t>(kNumIRNodeKinds));
}

// Rebuilds every node (renames buffer A), so each kind's default recursion
// must rebuild its parents.
class RenameA : public IRMutator {
 protected:
  Expr VisitLoad(const Expr& e, const Load* op) override {
    Expr index = Mutate(op->index);
    return Load::Make(op->buffer == "A" ? "A2" : op->buffer, index);
  }
};

TEST(IRTest, MutatorRecursesThroughEveryKindAndKeepsUnchangedNodes) {
  const Stmt tree = EveryKindTree();
  IRMutator identity;
  EXPECT_TRUE(identity.Mutate(tree).same_as(tree));

  RenameA rename;
  const Stmt renamed = rename.Mutate(tree);
  EXPECT_FALSE(renamed.same_as(tree));
  KindCounter counter;
  counter.Visit(renamed);
  EXPECT_EQ(counter.seen.size(), static_cast<size_t>(kNumIRNodeKinds));
  const std::string text = ToString(renamed);
  EXPECT_EQ(text.find("A["), std::string::npos) << text;
  EXPECT_NE(text.find("A2[i]"), std::string::npos) << text;
}

TEST(IRTest, PrinterPrintsEveryKind) {
  const std::string text = ToString(EveryKindTree());
  for (const char* piece : {"allocate S[float32 * 16] in shared",
                            "serial for (i, 0, 8) {",
                            "let j = i",
                            "if (",
                            "} else {",
                            "barrier",
                            "prefetch B[(i + int64(A[i]))]",
                            "ramp((i*4), 1, 4)",
                            "x4(",
                            "select(",
                            "float32(",
                            "min(max(",
                            " % 5",
                            "/4",
                            " - 2",
                            " == 0",
                            " != 1",
                            " || ",
                            " && ",
                            "!(i < 2)",
                            "(i <= 9)",
                            "1.5f"}) {
    EXPECT_NE(text.find(piece), std::string::npos) << piece << " missing from\n" << text;
  }
}

}  // namespace
}  // namespace tunefleet::ir

#include "tuner_core/ir/ir.h"

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
  Stmt s = For::Make("k", 0, 8, ForKind::kSerial,
                     Store::Make("C", Load::Make("C", 0) + Load::Make("A", k) * Load::Make("B", k + Cast::Make(Type::Int(), Load::Make("I", k))), 0));
  CountLoads count;
  count.Visit(s);
  EXPECT_EQ(count.loads, 4);
}

}  // namespace
}  // namespace tunefleet::ir

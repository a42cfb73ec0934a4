// Read-only walks over the IR, generated from the node-kind list in ir.h.
//
// - ExprFunctor<R> / StmtFunctor<R>: one pure virtual Visit<Kind> per node
//   kind and a dispatch with no default. Use them for consumers that must
//   give every kind a meaning (printer, code generator, interpreters,
//   analyses returning a value): forgetting a kind is a compile error, since
//   the class stays abstract.
// - IRVisitor: both functors with recursing defaults for every kind;
//   override the Visit overloads for the nodes you care about and call the
//   base to keep recursing (feature extraction, free-variable scans, checks).
#ifndef TUNEFLEET_TUNER_CORE_IR_IR_VISITOR_H_
#define TUNEFLEET_TUNER_CORE_IR_IR_VISITOR_H_

#include "common/check.h"
#include "tuner_core/ir/ir.h"

namespace tunefleet::ir {

template <typename R>
class ExprFunctor {
 public:
  virtual ~ExprFunctor() = default;

  // `e` must be defined.
  R VisitExpr(const Expr& e) {
    TF_CHECK(e.defined());
#define TUNEFLEET_IR_DISPATCH_CALL(name, node) Visit##name(static_cast<const node*>(e.get()))
    TUNEFLEET_IR_SWITCH_EXPR(e);
#undef TUNEFLEET_IR_DISPATCH_CALL
  }

 protected:
#define TUNEFLEET_IR_DECLARE(name, node) virtual R Visit##name(const node* op) = 0;
  TUNEFLEET_IR_EXPR_KINDS(TUNEFLEET_IR_DECLARE)
#undef TUNEFLEET_IR_DECLARE
};

template <typename R>
class StmtFunctor {
 public:
  virtual ~StmtFunctor() = default;

  // `s` must be defined.
  R VisitStmt(const Stmt& s) {
    TF_CHECK(s.defined());
#define TUNEFLEET_IR_DISPATCH_CALL(name, node) Visit##name(static_cast<const node*>(s.get()))
    TUNEFLEET_IR_SWITCH_STMT(s);
#undef TUNEFLEET_IR_DISPATCH_CALL
  }

 protected:
#define TUNEFLEET_IR_DECLARE(name, node) virtual R Visit##name(const node* op) = 0;
  TUNEFLEET_IR_STMT_KINDS(TUNEFLEET_IR_DECLARE)
#undef TUNEFLEET_IR_DECLARE
};

class IRVisitor : public ExprFunctor<void>, public StmtFunctor<void> {
 public:
  // Undefined handles (an absent else branch) are skipped.
  void Visit(const Expr& e) {
    if (e.defined()) VisitExpr(e);
  }
  void Visit(const Stmt& s) {
    if (s.defined()) VisitStmt(s);
  }

 protected:
  void VisitIntImm(const IntImm*) override {}
  void VisitFloatImm(const FloatImm*) override {}
  void VisitVar(const Var*) override {}
#define TUNEFLEET_IR_VISIT_BINARY(name, node) \
  void Visit##name(const BinaryOp* op) override { VisitOperands(op); }
  TUNEFLEET_IR_BINARY_OP_KINDS(TUNEFLEET_IR_VISIT_BINARY)
#undef TUNEFLEET_IR_VISIT_BINARY
  void VisitNot(const Not* op) override;
  void VisitSelect(const Select* op) override;
  void VisitCast(const Cast* op) override;
  void VisitLoad(const Load* op) override;
  void VisitRamp(const Ramp* op) override;
  void VisitBroadcast(const Broadcast* op) override;
  void VisitExp(const Exp* op) override;

  void VisitFor(const For* op) override;
  void VisitStore(const Store* op) override;
  void VisitAllocate(const Allocate* op) override;
  void VisitBlock(const Block* op) override;
  void VisitIfThenElse(const IfThenElse* op) override;
  void VisitLetStmt(const LetStmt* op) override;
  void VisitBarrier(const Barrier*) override {}
  void VisitPrefetch(const Prefetch* op) override;
  void VisitOutputReady(const OutputReady* op) override;

  // Visits both operands of any binary operator.
  void VisitOperands(const BinaryOp* op);
};

}  // namespace tunefleet::ir

#endif  // TUNEFLEET_TUNER_CORE_IR_IR_VISITOR_H_

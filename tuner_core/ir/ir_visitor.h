// IRVisitor walks an IR tree read-only; override the Visit overloads for the
// nodes you care about and call the base to keep recursing. Used by feature
// extraction, free-variable analysis and checks.
#ifndef TUNEFLEET_TUNER_CORE_IR_IR_VISITOR_H_
#define TUNEFLEET_TUNER_CORE_IR_IR_VISITOR_H_

#include "tuner_core/ir/ir.h"

namespace tunefleet::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;

  void Visit(const Expr& e);
  void Visit(const Stmt& s);

 protected:
  virtual void VisitIntImm(const IntImm*) {}
  virtual void VisitFloatImm(const FloatImm*) {}
  virtual void VisitVar(const Var*) {}
  virtual void VisitBinary(const BinaryOp* op);
  virtual void VisitNot(const Not* op);
  virtual void VisitSelect(const Select* op);
  virtual void VisitCast(const Cast* op);
  virtual void VisitLoad(const Load* op);
  virtual void VisitRamp(const Ramp* op);
  virtual void VisitBroadcast(const Broadcast* op);

  virtual void VisitFor(const For* op);
  virtual void VisitStore(const Store* op);
  virtual void VisitAllocate(const Allocate* op);
  virtual void VisitBlock(const Block* op);
  virtual void VisitIfThenElse(const IfThenElse* op);
  virtual void VisitLetStmt(const LetStmt* op);
};

}  // namespace tunefleet::ir

#endif  // TUNEFLEET_TUNER_CORE_IR_IR_VISITOR_H_

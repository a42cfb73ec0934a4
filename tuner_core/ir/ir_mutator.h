// IRMutator rebuilds an IR tree; by default it recurses and returns the same
// node when no child changed, so a pass overrides only the nodes it rewrites
// (Halide's IRMutator). Its per-kind Visit methods and its dispatch are
// generated from the node-kind list in ir.h, so every kind has one.
// Also: Substitute(), which replaces a variable.
#ifndef TUNEFLEET_TUNER_CORE_IR_IR_MUTATOR_H_
#define TUNEFLEET_TUNER_CORE_IR_IR_MUTATOR_H_

#include <string>

#include "tuner_core/ir/ir.h"

namespace tunefleet::ir {

class IRMutator {
 public:
  virtual ~IRMutator() = default;

  // Undefined handles come back undefined.
  Expr Mutate(const Expr& e);
  Stmt Mutate(const Stmt& s);

 protected:
  // Every kind: `e`/`s` is the handle of `op`, returned when nothing changed.
  virtual Expr VisitIntImm(const Expr& e, const IntImm*) { return e; }
  virtual Expr VisitFloatImm(const Expr& e, const FloatImm*) { return e; }
  virtual Expr VisitVar(const Expr& e, const Var*) { return e; }
#define TUNEFLEET_IR_MUTATE_BINARY(name, node) \
  virtual Expr Visit##name(const Expr& e, const BinaryOp* op) { return MutateOperands(e, op); }
  TUNEFLEET_IR_BINARY_OP_KINDS(TUNEFLEET_IR_MUTATE_BINARY)
#undef TUNEFLEET_IR_MUTATE_BINARY
  virtual Expr VisitNot(const Expr& e, const Not* op);
  virtual Expr VisitSelect(const Expr& e, const Select* op);
  virtual Expr VisitCast(const Expr& e, const Cast* op);
  virtual Expr VisitLoad(const Expr& e, const Load* op);
  virtual Expr VisitRamp(const Expr& e, const Ramp* op);
  virtual Expr VisitBroadcast(const Expr& e, const Broadcast* op);
  virtual Expr VisitExp(const Expr& e, const Exp* op);

  virtual Stmt VisitFor(const Stmt& s, const For* op);
  virtual Stmt VisitStore(const Stmt& s, const Store* op);
  virtual Stmt VisitAllocate(const Stmt& s, const Allocate* op);
  virtual Stmt VisitBlock(const Stmt& s, const Block* op);
  virtual Stmt VisitIfThenElse(const Stmt& s, const IfThenElse* op);
  virtual Stmt VisitLetStmt(const Stmt& s, const LetStmt* op);
  virtual Stmt VisitBarrier(const Stmt& s, const Barrier*) { return s; }
  virtual Stmt VisitPrefetch(const Stmt& s, const Prefetch* op);
  virtual Stmt VisitOutputReady(const Stmt& s, const OutputReady* op);

  // Mutates both operands of any binary operator and rebuilds it (same
  // kind) if either changed.
  Expr MutateOperands(const Expr& e, const BinaryOp* op);
};

// Replaces every use of variable `name` by `value` (in expressions and
// statements). Loops or lets that rebind `name` shadow it.
Expr Substitute(const Expr& e, const std::string& name, const Expr& value);
Stmt Substitute(const Stmt& s, const std::string& name, const Expr& value);

}  // namespace tunefleet::ir

#endif  // TUNEFLEET_TUNER_CORE_IR_IR_MUTATOR_H_

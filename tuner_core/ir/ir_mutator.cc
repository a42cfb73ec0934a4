#include "tuner_core/ir/ir_mutator.h"

#include <utility>
#include <vector>

namespace tunefleet::ir {

Expr IRMutator::Mutate(const Expr& e) {
  if (!e.defined()) return e;
#define TUNEFLEET_IR_DISPATCH_CALL(name, node) Visit##name(e, static_cast<const node*>(e.get()))
  TUNEFLEET_IR_SWITCH_EXPR(e);
#undef TUNEFLEET_IR_DISPATCH_CALL
}

Stmt IRMutator::Mutate(const Stmt& s) {
  if (!s.defined()) return s;
#define TUNEFLEET_IR_DISPATCH_CALL(name, node) Visit##name(s, static_cast<const node*>(s.get()))
  TUNEFLEET_IR_SWITCH_STMT(s);
#undef TUNEFLEET_IR_DISPATCH_CALL
}

Expr IRMutator::MutateOperands(const Expr& e, const BinaryOp* op) {
  Expr a = Mutate(op->a), b = Mutate(op->b);
  if (a.same_as(op->a) && b.same_as(op->b)) return e;
  return BinaryOp::Make(op->kind, std::move(a), std::move(b));
}

Expr IRMutator::VisitNot(const Expr& e, const Not* op) {
  Expr a = Mutate(op->a);
  return a.same_as(op->a) ? e : Not::Make(std::move(a));
}

Expr IRMutator::VisitSelect(const Expr& e, const Select* op) {
  Expr c = Mutate(op->condition), t = Mutate(op->true_value), f = Mutate(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return e;
  return Select::Make(std::move(c), std::move(t), std::move(f));
}

Expr IRMutator::VisitCast(const Expr& e, const Cast* op) {
  Expr v = Mutate(op->value);
  if (v.same_as(op->value)) return e;
  // The lanes are read before `v` is moved into the argument list (the
  // order arguments are evaluated in is unspecified).
  const Type type = op->type.WithLanes(v.type().lanes);
  return Cast::Make(type, std::move(v));
}

Expr IRMutator::VisitExp(const Expr& e, const Exp* op) {
  Expr v = Mutate(op->value);
  if (v.same_as(op->value)) return e;
  return Exp::Make(std::move(v));
}

Expr IRMutator::VisitLoad(const Expr& e, const Load* op) {
  Expr index = Mutate(op->index);
  return index.same_as(op->index) ? e : Load::Make(op->buffer, std::move(index));
}

Expr IRMutator::VisitRamp(const Expr& e, const Ramp* op) {
  Expr base = Mutate(op->base), stride = Mutate(op->stride);
  if (base.same_as(op->base) && stride.same_as(op->stride)) return e;
  return Ramp::Make(std::move(base), std::move(stride), op->lanes);
}

Expr IRMutator::VisitBroadcast(const Expr& e, const Broadcast* op) {
  Expr v = Mutate(op->value);
  return v.same_as(op->value) ? e : Broadcast::Make(std::move(v), op->lanes);
}

Stmt IRMutator::VisitFor(const Stmt& s, const For* op) {
  Expr min = Mutate(op->min), extent = Mutate(op->extent);
  Stmt body = Mutate(op->body);
  if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return s;
  return For::Make(op->var, std::move(min), std::move(extent), op->for_kind, std::move(body));
}

Stmt IRMutator::VisitStore(const Stmt& s, const Store* op) {
  Expr value = Mutate(op->value), index = Mutate(op->index);
  if (value.same_as(op->value) && index.same_as(op->index)) return s;
  return Store::Make(op->buffer, std::move(value), std::move(index));
}

Stmt IRMutator::VisitAllocate(const Stmt& s, const Allocate* op) {
  Stmt body = Mutate(op->body);
  if (body.same_as(op->body)) return s;
  return Allocate::Make(op->buffer, op->num_elements, op->scope, std::move(body));
}

Stmt IRMutator::VisitBlock(const Stmt& s, const Block* op) {
  std::vector<Stmt> stmts;
  stmts.reserve(op->stmts.size());
  bool changed = false;
  for (const Stmt& child : op->stmts) {
    stmts.push_back(Mutate(child));
    changed |= !stmts.back().same_as(child);
  }
  return changed ? Block::Make(std::move(stmts)) : s;
}

Stmt IRMutator::VisitIfThenElse(const Stmt& s, const IfThenElse* op) {
  Expr c = Mutate(op->condition);
  Stmt t = Mutate(op->then_case), e = Mutate(op->else_case);
  if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return s;
  return IfThenElse::Make(std::move(c), std::move(t), std::move(e));
}

Stmt IRMutator::VisitLetStmt(const Stmt& s, const LetStmt* op) {
  Expr value = Mutate(op->value);
  Stmt body = Mutate(op->body);
  if (value.same_as(op->value) && body.same_as(op->body)) return s;
  return LetStmt::Make(op->var, std::move(value), std::move(body));
}

Stmt IRMutator::VisitPrefetch(const Stmt& s, const Prefetch* op) {
  Expr index = Mutate(op->index);
  if (index.same_as(op->index)) return s;
  return Prefetch::Make(op->buffer, std::move(index));
}

Stmt IRMutator::VisitOutputReady(const Stmt& s, const OutputReady* op) {
  Expr offset = Mutate(op->offset), rows = Mutate(op->rows), cols = Mutate(op->cols),
       row_stride = Mutate(op->row_stride);
  if (offset.same_as(op->offset) && rows.same_as(op->rows) && cols.same_as(op->cols) &&
      row_stride.same_as(op->row_stride)) {
    return s;
  }
  return OutputReady::Make(op->buffer, std::move(offset), std::move(rows), std::move(cols),
                           std::move(row_stride));
}

namespace {

class Substituter : public IRMutator {
 public:
  Substituter(std::string name, Expr value) : name_(std::move(name)), value_(std::move(value)) {}

 protected:
  Expr VisitVar(const Expr& e, const Var* op) override { return op->name == name_ ? value_ : e; }
  Stmt VisitFor(const Stmt& s, const For* op) override {
    if (op->var != name_) return IRMutator::VisitFor(s, op);
    // The loop rebinds the name: only its bounds see the outer value.
    Expr min = Mutate(op->min), extent = Mutate(op->extent);
    return For::Make(op->var, min, extent, op->for_kind, op->body);
  }
  Stmt VisitLetStmt(const Stmt& s, const LetStmt* op) override {
    if (op->var != name_) return IRMutator::VisitLetStmt(s, op);
    return LetStmt::Make(op->var, Mutate(op->value), op->body);
  }

 private:
  std::string name_;
  Expr value_;
};

}  // namespace

Expr Substitute(const Expr& e, const std::string& name, const Expr& value) {
  Substituter s(name, value);
  return s.Mutate(e);
}

Stmt Substitute(const Stmt& s, const std::string& name, const Expr& value) {
  Substituter sub(name, value);
  return sub.Mutate(s);
}

}  // namespace tunefleet::ir

#include "tuner_core/ir/ir_visitor.h"

namespace tunefleet::ir {

void IRVisitor::Visit(const Expr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
    case IRNodeKind::kIntImm: return VisitIntImm(e.as<IntImm>());
    case IRNodeKind::kFloatImm: return VisitFloatImm(e.as<FloatImm>());
    case IRNodeKind::kVar: return VisitVar(e.as<Var>());
    case IRNodeKind::kNot: return VisitNot(e.as<Not>());
    case IRNodeKind::kSelect: return VisitSelect(e.as<Select>());
    case IRNodeKind::kCast: return VisitCast(e.as<Cast>());
    case IRNodeKind::kLoad: return VisitLoad(e.as<Load>());
    case IRNodeKind::kRamp: return VisitRamp(e.as<Ramp>());
    case IRNodeKind::kBroadcast: return VisitBroadcast(e.as<Broadcast>());
    default: return VisitBinary(static_cast<const BinaryOp*>(e.get()));
  }
}

void IRVisitor::Visit(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case IRNodeKind::kFor: return VisitFor(s.as<For>());
    case IRNodeKind::kStore: return VisitStore(s.as<Store>());
    case IRNodeKind::kAllocate: return VisitAllocate(s.as<Allocate>());
    case IRNodeKind::kBlock: return VisitBlock(s.as<Block>());
    case IRNodeKind::kIfThenElse: return VisitIfThenElse(s.as<IfThenElse>());
    case IRNodeKind::kLetStmt: return VisitLetStmt(s.as<LetStmt>());
    default: return;
  }
}

void IRVisitor::VisitBinary(const BinaryOp* op) { Visit(op->a); Visit(op->b); }
void IRVisitor::VisitNot(const Not* op) { Visit(op->a); }
void IRVisitor::VisitSelect(const Select* op) {
  Visit(op->condition); Visit(op->true_value); Visit(op->false_value);
}
void IRVisitor::VisitCast(const Cast* op) { Visit(op->value); }
void IRVisitor::VisitLoad(const Load* op) { Visit(op->index); }
void IRVisitor::VisitRamp(const Ramp* op) { Visit(op->base); Visit(op->stride); }
void IRVisitor::VisitBroadcast(const Broadcast* op) { Visit(op->value); }
void IRVisitor::VisitFor(const For* op) { Visit(op->min); Visit(op->extent); Visit(op->body); }
void IRVisitor::VisitStore(const Store* op) { Visit(op->value); Visit(op->index); }
void IRVisitor::VisitAllocate(const Allocate* op) { Visit(op->body); }
void IRVisitor::VisitBlock(const Block* op) {
  for (const Stmt& s : op->stmts) Visit(s);
}
void IRVisitor::VisitIfThenElse(const IfThenElse* op) {
  Visit(op->condition); Visit(op->then_case); Visit(op->else_case);
}
void IRVisitor::VisitLetStmt(const LetStmt* op) { Visit(op->value); Visit(op->body); }

}  // namespace tunefleet::ir

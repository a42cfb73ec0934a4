#include "tuner_core/ir/ir_visitor.h"

namespace tunefleet::ir {

void IRVisitor::VisitOperands(const BinaryOp* op) {
  Visit(op->a);
  Visit(op->b);
}
void IRVisitor::VisitNot(const Not* op) { Visit(op->a); }
void IRVisitor::VisitSelect(const Select* op) {
  Visit(op->condition);
  Visit(op->true_value);
  Visit(op->false_value);
}
void IRVisitor::VisitCast(const Cast* op) { Visit(op->value); }
void IRVisitor::VisitExp(const Exp* op) { Visit(op->value); }
void IRVisitor::VisitLoad(const Load* op) { Visit(op->index); }
void IRVisitor::VisitRamp(const Ramp* op) {
  Visit(op->base);
  Visit(op->stride);
}
void IRVisitor::VisitBroadcast(const Broadcast* op) { Visit(op->value); }
void IRVisitor::VisitFor(const For* op) {
  Visit(op->min);
  Visit(op->extent);
  Visit(op->body);
}
void IRVisitor::VisitStore(const Store* op) {
  Visit(op->value);
  Visit(op->index);
}
void IRVisitor::VisitAllocate(const Allocate* op) { Visit(op->body); }
void IRVisitor::VisitBlock(const Block* op) {
  for (const Stmt& s : op->stmts) Visit(s);
}
void IRVisitor::VisitIfThenElse(const IfThenElse* op) {
  Visit(op->condition);
  Visit(op->then_case);
  Visit(op->else_case);
}
void IRVisitor::VisitLetStmt(const LetStmt* op) {
  Visit(op->value);
  Visit(op->body);
}
void IRVisitor::VisitPrefetch(const Prefetch* op) { Visit(op->index); }
void IRVisitor::VisitOutputReady(const OutputReady* op) {
  Visit(op->offset);
  Visit(op->rows);
  Visit(op->cols);
  Visit(op->row_stride);
}

}  // namespace tunefleet::ir

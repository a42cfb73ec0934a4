#include "tuner_core/ir/ir_printer.h"

#include <iterator>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tuner_core/ir/ir_visitor.h"

namespace tunefleet::ir {
namespace {

const char* ScopeName(MemoryScope scope) {
  // Indexed by MemoryScope, in its order.
  static constexpr const char* kNames[] = {"global", "stack", "shared"};
  static_assert(std::size(kNames) == static_cast<size_t>(MemoryScope::kShared) + 1);
  return kNames[static_cast<int>(scope)];
}

class Printer : public ExprFunctor<std::string>, public StmtFunctor<void> {
 public:
  std::string Print(const Expr& e) { return e.defined() ? VisitExpr(e) : "<undef>"; }

  void Print(const Stmt& s, int indent) {
    if (!s.defined()) return;
    const int saved = indent_;
    indent_ = indent;
    VisitStmt(s);
    indent_ = saved;
  }

  std::string str() const { return out_.str(); }

 protected:
  std::string VisitIntImm(const IntImm* op) override { return absl::StrCat(op->value); }
  std::string VisitFloatImm(const FloatImm* op) override { return absl::StrCat(op->value, "f"); }
  std::string VisitVar(const Var* op) override { return op->name; }
  std::string VisitAdd(const BinaryOp* op) override { return Infix(op, " + "); }
  std::string VisitSub(const BinaryOp* op) override { return Infix(op, " - "); }
  std::string VisitMul(const BinaryOp* op) override { return Infix(op, "*"); }
  std::string VisitDiv(const BinaryOp* op) override { return Infix(op, "/"); }
  std::string VisitMod(const BinaryOp* op) override { return Infix(op, " % "); }
  std::string VisitMin(const BinaryOp* op) override { return Call("min", op); }
  std::string VisitMax(const BinaryOp* op) override { return Call("max", op); }
  std::string VisitEQ(const BinaryOp* op) override { return Infix(op, " == "); }
  std::string VisitNE(const BinaryOp* op) override { return Infix(op, " != "); }
  std::string VisitLT(const BinaryOp* op) override { return Infix(op, " < "); }
  std::string VisitLE(const BinaryOp* op) override { return Infix(op, " <= "); }
  std::string VisitAnd(const BinaryOp* op) override { return Infix(op, " && "); }
  std::string VisitOr(const BinaryOp* op) override { return Infix(op, " || "); }
  std::string VisitNot(const Not* op) override { return absl::StrCat("!", Print(op->a)); }
  std::string VisitSelect(const Select* op) override {
    return absl::StrCat("select(", Print(op->condition), ", ", Print(op->true_value), ", ",
                        Print(op->false_value), ")");
  }
  std::string VisitCast(const Cast* op) override {
    return absl::StrCat(op->type.ToString(), "(", Print(op->value), ")");
  }
  std::string VisitExp(const Exp* op) override {
    return absl::StrCat("exp(", Print(op->value), ")");
  }
  std::string VisitLoad(const Load* op) override {
    return absl::StrCat(op->buffer, "[", Print(op->index), "]");
  }
  std::string VisitRamp(const Ramp* op) override {
    return absl::StrCat("ramp(", Print(op->base), ", ", Print(op->stride), ", ", op->lanes, ")");
  }
  std::string VisitBroadcast(const Broadcast* op) override {
    return absl::StrCat("x", op->lanes, "(", Print(op->value), ")");
  }

  void VisitFor(const For* op) override {
    out_ << pad() << ForKindName(op->for_kind) << " for (" << op->var << ", " << Print(op->min)
         << ", " << Print(op->extent) << ") {\n";
    Print(op->body, indent_ + 1);
    out_ << pad() << "}\n";
  }
  void VisitStore(const Store* op) override {
    out_ << pad() << op->buffer << "[" << Print(op->index) << "] = " << Print(op->value) << "\n";
  }
  void VisitAllocate(const Allocate* op) override {
    out_ << pad() << "allocate " << op->buffer << "[float32 * " << op->num_elements << "] in "
         << ScopeName(op->scope) << "\n";
    Print(op->body, indent_);
  }
  void VisitBlock(const Block* op) override {
    for (const Stmt& child : op->stmts) Print(child, indent_);
  }
  void VisitIfThenElse(const IfThenElse* op) override {
    out_ << pad() << "if (" << Print(op->condition) << ") {\n";
    Print(op->then_case, indent_ + 1);
    if (op->else_case.defined()) {
      out_ << pad() << "} else {\n";
      Print(op->else_case, indent_ + 1);
    }
    out_ << pad() << "}\n";
  }
  void VisitLetStmt(const LetStmt* op) override {
    out_ << pad() << "let " << op->var << " = " << Print(op->value) << "\n";
    Print(op->body, indent_);
  }
  void VisitBarrier(const Barrier*) override { out_ << pad() << "barrier\n"; }
  void VisitPrefetch(const Prefetch* op) override {
    out_ << pad() << "prefetch " << op->buffer << "[" << Print(op->index) << "]\n";
  }
  void VisitOutputReady(const OutputReady* op) override {
    out_ << pad() << "ready " << op->buffer << "[" << Print(op->offset) << "] " << Print(op->rows)
         << " x " << Print(op->cols) << " stride " << Print(op->row_stride) << "\n";
  }

 private:
  std::string Infix(const BinaryOp* op, const char* symbol) {
    return absl::StrCat("(", Print(op->a), symbol, Print(op->b), ")");
  }
  std::string Call(const char* name, const BinaryOp* op) {
    return absl::StrCat(name, "(", Print(op->a), ", ", Print(op->b), ")");
  }
  std::string pad() const { return std::string(indent_ * 2, ' '); }

  int indent_ = 0;

 private:
  std::ostringstream out_;
};

}  // namespace

std::string ToString(const Expr& e) { return Printer().Print(e); }

std::string ToString(const Stmt& s) {
  Printer p;
  p.Print(s, 0);
  return p.str();
}

std::string ToString(const LoweredFunc& f) {
  std::vector<std::string> args;
  for (const BufferArg& a : f.args) {
    args.push_back(
        absl::StrCat(a.is_output ? "out " : "", a.name, "[", absl::StrJoin(a.shape, "x"), "]"));
  }
  for (const StagedBuffer& b : f.staged)
    args.push_back(absl::StrCat("staged ", b.name, "[", b.num_elements, "]"));
  const std::string signature = absl::StrCat("(", absl::StrJoin(args, ", "), ")");
  auto stage = [&](const std::string& name, const Stmt& body) {
    if (!body.defined()) return std::string();
    Printer p;
    p.Print(body, 1);
    return absl::StrCat("func ", name, signature, " {\n", p.str(), "}\n");
  };
  return absl::StrCat(stage(f.name + "_prepare", f.prepare), stage(f.name, f.body),
                      stage(f.name + "_finish", f.finish));
}

}  // namespace tunefleet::ir

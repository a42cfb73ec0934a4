#include "tuner_core/ir/ir_printer.h"

#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tunefleet::ir {
namespace {

const char* BinarySymbol(IRNodeKind kind) {
  switch (kind) {
    case IRNodeKind::kAdd: return " + ";
    case IRNodeKind::kSub: return " - ";
    case IRNodeKind::kMul: return "*";
    case IRNodeKind::kDiv: return "/";
    case IRNodeKind::kMod: return " % ";
    case IRNodeKind::kEQ: return " == ";
    case IRNodeKind::kNE: return " != ";
    case IRNodeKind::kLT: return " < ";
    case IRNodeKind::kLE: return " <= ";
    case IRNodeKind::kAnd: return " && ";
    case IRNodeKind::kOr: return " || ";
    default: return nullptr;
  }
}

class Printer {
 public:
  std::string Print(const Expr& e) {
    if (!e.defined()) return "<undef>";
    switch (e.kind()) {
      case IRNodeKind::kIntImm: return absl::StrCat(e.as<IntImm>()->value);
      case IRNodeKind::kFloatImm: return absl::StrCat(e.as<FloatImm>()->value, "f");
      case IRNodeKind::kVar: return e.as<Var>()->name;
      case IRNodeKind::kNot: return absl::StrCat("!", Print(e.as<Not>()->a));
      case IRNodeKind::kSelect: {
        const Select* op = e.as<Select>();
        return absl::StrCat("select(", Print(op->condition), ", ", Print(op->true_value), ", ",
                            Print(op->false_value), ")");
      }
      case IRNodeKind::kCast:
        return absl::StrCat(e.type().ToString(), "(", Print(e.as<Cast>()->value), ")");
      case IRNodeKind::kLoad:
        return absl::StrCat(e.as<Load>()->buffer, "[", Print(e.as<Load>()->index), "]");
      case IRNodeKind::kRamp: {
        const Ramp* op = e.as<Ramp>();
        return absl::StrCat("ramp(", Print(op->base), ", ", Print(op->stride), ", ", op->lanes, ")");
      }
      case IRNodeKind::kBroadcast: {
        const Broadcast* op = e.as<Broadcast>();
        return absl::StrCat("x", op->lanes, "(", Print(op->value), ")");
      }
      case IRNodeKind::kMin:
      case IRNodeKind::kMax: {
        const BinaryOp* op = static_cast<const BinaryOp*>(e.get());
        return absl::StrCat(e.kind() == IRNodeKind::kMin ? "min(" : "max(", Print(op->a), ", ",
                            Print(op->b), ")");
      }
      default: {
        const BinaryOp* op = static_cast<const BinaryOp*>(e.get());
        return absl::StrCat("(", Print(op->a), BinarySymbol(op->kind), Print(op->b), ")");
      }
    }
  }

  void Print(const Stmt& s, int indent) {
    if (!s.defined()) return;
    std::string pad(indent * 2, ' ');
    switch (s.kind()) {
      case IRNodeKind::kFor: {
        const For* op = s.as<For>();
        out_ << pad << ForKindName(op->for_kind) << " for (" << op->var << ", " << Print(op->min)
             << ", " << Print(op->extent) << ") {\n";
        Print(op->body, indent + 1);
        out_ << pad << "}\n";
        break;
      }
      case IRNodeKind::kStore: {
        const Store* op = s.as<Store>();
        out_ << pad << op->buffer << "[" << Print(op->index) << "] = " << Print(op->value) << "\n";
        break;
      }
      case IRNodeKind::kAllocate: {
        const Allocate* op = s.as<Allocate>();
        out_ << pad << "allocate " << op->buffer << "[float32 * " << op->num_elements << "] in "
             << (op->scope == MemoryScope::kGlobal  ? "global"
                 : op->scope == MemoryScope::kShared ? "shared"
                                                     : "stack")
             << "\n";
        Print(op->body, indent);
        break;
      }
      case IRNodeKind::kBlock:
        for (const Stmt& child : s.as<Block>()->stmts) Print(child, indent);
        break;
      case IRNodeKind::kIfThenElse: {
        const IfThenElse* op = s.as<IfThenElse>();
        out_ << pad << "if (" << Print(op->condition) << ") {\n";
        Print(op->then_case, indent + 1);
        if (op->else_case.defined()) {
          out_ << pad << "} else {\n";
          Print(op->else_case, indent + 1);
        }
        out_ << pad << "}\n";
        break;
      }
      case IRNodeKind::kLetStmt: {
        const LetStmt* op = s.as<LetStmt>();
        out_ << pad << "let " << op->var << " = " << Print(op->value) << "\n";
        Print(op->body, indent);
        break;
      }
      case IRNodeKind::kBarrier:
        out_ << pad << "barrier\n";
        break;
      default:
        break;
    }
  }

  std::string str() const { return out_.str(); }

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
    args.push_back(absl::StrCat(a.is_output ? "out " : "", a.name, "[", absl::StrJoin(a.shape, "x"), "]"));
  }
  for (const StagedBuffer& b : f.staged) args.push_back(absl::StrCat("staged ", b.name, "[", b.num_elements, "]"));
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

#include "tuner_core/ir/ir.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/saturating_product.h"

namespace tunefleet::ir {
namespace {

bool IsComparison(IRNodeKind kind) {
  return kind == IRNodeKind::kEQ || kind == IRNodeKind::kNE || kind == IRNodeKind::kLT ||
         kind == IRNodeKind::kLE;
}

bool IsLogical(IRNodeKind kind) { return kind == IRNodeKind::kAnd || kind == IRNodeKind::kOr; }

// Folds integer constants so index arithmetic that unrolling makes constant
// stays readable; LLVM would fold it too, this just keeps the IR small.
Expr FoldInt(IRNodeKind kind, int64_t a, int64_t b) {
  switch (kind) {
    case IRNodeKind::kAdd:
      return IntImm::Make(a + b);
    case IRNodeKind::kSub:
      return IntImm::Make(a - b);
    case IRNodeKind::kMul:
      return IntImm::Make(a * b);
    case IRNodeKind::kDiv:
      return b != 0 ? IntImm::Make(a / b) : Expr();
    case IRNodeKind::kMod:
      return b != 0 ? IntImm::Make(a % b) : Expr();
    case IRNodeKind::kMin:
      return IntImm::Make(std::min(a, b));
    case IRNodeKind::kMax:
      return IntImm::Make(std::max(a, b));
    default:
      return Expr();
  }
}

}  // namespace

const char* IRNodeKindName(IRNodeKind kind) {
  switch (kind) {
#define TUNEFLEET_IR_KIND_NAME(name, node) \
  case IRNodeKind::k##name:                \
    return #name;
    TUNEFLEET_IR_EXPR_KINDS(TUNEFLEET_IR_KIND_NAME)
    TUNEFLEET_IR_STMT_KINDS(TUNEFLEET_IR_KIND_NAME)
#undef TUNEFLEET_IR_KIND_NAME
  }
  return "?";
}

bool IsExprKind(IRNodeKind kind) { return static_cast<int>(kind) < kNumExprKinds; }

void UnreachableNodeKind(IRNodeKind kind, const char* where) {
  std::fprintf(stderr, "%s: node kind %s in the wrong handle\n", where, IRNodeKindName(kind));
  std::abort();
}

std::string Type::ToString() const {
  const char* base = is_int() ? "int64" : (is_float() ? "float32" : "bool");
  return lanes == 1 ? std::string(base) : absl::StrCat(base, "x", lanes);
}

Expr::Expr(int64_t value) : node_(std::make_shared<IntImm>(value)) {}
Expr::Expr(int value) : node_(std::make_shared<IntImm>(value)) {}
Expr::Expr(double value) : node_(std::make_shared<FloatImm>(value)) {}

Expr IntImm::Make(int64_t v) { return Expr(std::make_shared<IntImm>(v)); }
Expr FloatImm::Make(double v) { return Expr(std::make_shared<FloatImm>(v)); }
Expr Var::Make(const std::string& name, Type type) {
  return Expr(std::make_shared<Var>(name, type));
}

bool BinaryOp::IsBinary(IRNodeKind kind) {
  return kind >= IRNodeKind::kAdd && kind <= IRNodeKind::kOr;
}

Expr BinaryOp::Make(IRNodeKind kind, Expr a, Expr b) {
  TF_CHECK(a.defined() && b.defined());
  TF_CHECK(IsBinary(kind));
  // Integer constants mixed with floats are a template convenience (x * 2).
  if (a.type().is_float() && b.as<IntImm>())
    b = FloatImm::Make(static_cast<double>(b.as<IntImm>()->value));
  if (b.type().is_float() && a.as<IntImm>())
    a = FloatImm::Make(static_cast<double>(a.as<IntImm>()->value));
  TF_CHECK(a.type().scalar == b.type().scalar);
  if (a.type().lanes != b.type().lanes) {
    if (a.type().lanes == 1) {
      a = Broadcast::Make(a, b.type().lanes);
    } else {
      TF_CHECK(b.type().lanes == 1);
      b = Broadcast::Make(b, a.type().lanes);
    }
  }
  const int64_t* ca = AsConstInt(a);
  const int64_t* cb = AsConstInt(b);
  if (ca && cb) {
    Expr folded = FoldInt(kind, *ca, *cb);
    if (folded.defined()) return folded;
  }
  if (a.type().is_int() && a.type().lanes == 1) {
    if (kind == IRNodeKind::kAdd && ca && *ca == 0) return b;
    if ((kind == IRNodeKind::kAdd || kind == IRNodeKind::kSub) && cb && *cb == 0) return a;
    if (kind == IRNodeKind::kMul && ((ca && *ca == 0) || (cb && *cb == 0))) return IntImm::Make(0);
    if (kind == IRNodeKind::kMul && ca && *ca == 1) return b;
    if ((kind == IRNodeKind::kMul || kind == IRNodeKind::kDiv) && cb && *cb == 1) return a;
    if (kind == IRNodeKind::kMod && cb && *cb == 1) return IntImm::Make(0);
  }
  Type type = a.type();
  if (IsComparison(kind)) type = Type::Bool(a.type().lanes);
  if (IsLogical(kind)) TF_CHECK(a.type().is_bool());
  if (kind == IRNodeKind::kMod) TF_CHECK(a.type().is_int());
  return Expr(std::make_shared<BinaryOp>(kind, type, std::move(a), std::move(b)));
}

Expr Not::Make(Expr a) {
  TF_CHECK(a.type().is_bool());
  return Expr(std::make_shared<Not>(std::move(a)));
}

Expr Select::Make(Expr condition, Expr true_value, Expr false_value) {
  TF_CHECK(condition.type().is_bool());
  if (true_value.type().is_float() && false_value.as<IntImm>())
    false_value = FloatImm::Make(static_cast<double>(false_value.as<IntImm>()->value));
  if (false_value.type().is_float() && true_value.as<IntImm>())
    true_value = FloatImm::Make(static_cast<double>(true_value.as<IntImm>()->value));
  int lanes = std::max({condition.type().lanes, true_value.type().lanes, false_value.type().lanes});
  if (lanes > 1) {
    if (condition.type().lanes == 1) condition = Broadcast::Make(condition, lanes);
    if (true_value.type().lanes == 1) true_value = Broadcast::Make(true_value, lanes);
    if (false_value.type().lanes == 1) false_value = Broadcast::Make(false_value, lanes);
  }
  TF_CHECK(true_value.type() == false_value.type());
  Type type = true_value.type();
  return Expr(std::make_shared<Select>(type, std::move(condition), std::move(true_value),
                                       std::move(false_value)));
}

Expr Exp::Make(Expr value) {
  TF_CHECK(value.type().is_float());
  return Expr(std::make_shared<Exp>(std::move(value)));
}

Expr Cast::Make(Type type, Expr value) {
  TF_CHECK(type.lanes == value.type().lanes);
  if (type == value.type()) return value;
  return Expr(std::make_shared<Cast>(type, std::move(value)));
}

Expr Load::Make(const std::string& buffer, Expr index) {
  TF_CHECK(index.type().is_int());
  return Expr(std::make_shared<Load>(buffer, std::move(index)));
}

Expr Ramp::Make(Expr base, Expr stride, int lanes) {
  TF_CHECK(base.type().lanes == 1 && stride.type().lanes == 1 && lanes > 1);
  return Expr(std::make_shared<Ramp>(std::move(base), std::move(stride), lanes));
}

Expr Broadcast::Make(Expr value, int lanes) {
  TF_CHECK(value.type().lanes == 1);
  if (lanes == 1) return value;
  return Expr(std::make_shared<Broadcast>(std::move(value), lanes));
}

const char* ForKindName(ForKind kind) {
  // Indexed by ForKind, in its order.
  static constexpr const char* kNames[] = {"serial",      "parallel",   "vectorized", "unrolled",
                                           "blockIdx.x",  "blockIdx.y", "blockIdx.z", "threadIdx.x",
                                           "threadIdx.y", "threadIdx.z"};
  static_assert(std::size(kNames) == static_cast<size_t>(ForKind::kThreadIdxZ) + 1);
  return kNames[static_cast<int>(kind)];
}

bool IsBlockBound(ForKind kind) {
  return kind == ForKind::kBlockIdxX || kind == ForKind::kBlockIdxY || kind == ForKind::kBlockIdxZ;
}

bool IsThreadBound(ForKind kind) {
  return kind == ForKind::kThreadIdxX || kind == ForKind::kThreadIdxY ||
         kind == ForKind::kThreadIdxZ;
}

bool IsGpuBound(ForKind kind) { return IsBlockBound(kind) || IsThreadBound(kind); }

int GpuAxis(ForKind kind) {
  switch (kind) {
    case ForKind::kBlockIdxX:
    case ForKind::kThreadIdxX:
      return 0;
    case ForKind::kBlockIdxY:
    case ForKind::kThreadIdxY:
      return 1;
    case ForKind::kBlockIdxZ:
    case ForKind::kThreadIdxZ:
      return 2;
    default:
      return -1;
  }
}

Stmt Barrier::Make() { return Stmt(std::make_shared<Barrier>()); }

Stmt Prefetch::Make(const std::string& buffer, Expr index) {
  TF_CHECK(index.type() == Type::Int());
  return Stmt(std::make_shared<Prefetch>(buffer, std::move(index)));
}

Stmt OutputReady::Make(const std::string& buffer, Expr offset, Expr rows, Expr cols,
                       Expr row_stride) {
  TF_CHECK(offset.type() == Type::Int() && rows.type() == Type::Int() &&
           cols.type() == Type::Int() && row_stride.type() == Type::Int());
  return Stmt(std::make_shared<OutputReady>(buffer, std::move(offset), std::move(rows),
                                            std::move(cols), std::move(row_stride)));
}

Stmt For::Make(const std::string& var, Expr min, Expr extent, ForKind kind, Stmt body) {
  TF_CHECK(min.type() == Type::Int() && extent.type() == Type::Int() && body.defined());
  return Stmt(std::make_shared<For>(var, std::move(min), std::move(extent), kind, std::move(body)));
}

Stmt Store::Make(const std::string& buffer, Expr value, Expr index) {
  if (value.as<IntImm>()) value = FloatImm::Make(static_cast<double>(value.as<IntImm>()->value));
  TF_CHECK(value.type().is_float() && index.type().is_int());
  if (index.type().lanes > 1 && value.type().lanes == 1)
    value = Broadcast::Make(value, index.type().lanes);
  return Stmt(std::make_shared<Store>(buffer, std::move(value), std::move(index)));
}

Stmt Allocate::Make(const std::string& buffer, int64_t num_elements, MemoryScope scope, Stmt body) {
  TF_CHECK(num_elements > 0 && body.defined());
  return Stmt(std::make_shared<Allocate>(buffer, num_elements, scope, std::move(body)));
}

Stmt Block::Make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s.defined()) continue;
    if (const Block* inner = s.as<Block>()) {
      flat.insert(flat.end(), inner->stmts.begin(), inner->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  return Stmt(std::make_shared<Block>(std::move(flat)));
}

Stmt IfThenElse::Make(Expr condition, Stmt then_case, Stmt else_case) {
  TF_CHECK(condition.type().is_bool() && then_case.defined());
  return Stmt(std::make_shared<IfThenElse>(std::move(condition), std::move(then_case),
                                           std::move(else_case)));
}

Stmt LetStmt::Make(const std::string& var, Expr value, Stmt body) {
  return Stmt(std::make_shared<LetStmt>(var, std::move(value), std::move(body)));
}

int64_t BufferArg::NumElements() const { return SaturatingProduct(shape); }

Expr operator+(Expr a, Expr b) {
  return BinaryOp::Make(IRNodeKind::kAdd, std::move(a), std::move(b));
}
Expr operator-(Expr a, Expr b) {
  return BinaryOp::Make(IRNodeKind::kSub, std::move(a), std::move(b));
}
Expr operator*(Expr a, Expr b) {
  return BinaryOp::Make(IRNodeKind::kMul, std::move(a), std::move(b));
}
Expr operator/(Expr a, Expr b) {
  return BinaryOp::Make(IRNodeKind::kDiv, std::move(a), std::move(b));
}
Expr operator%(Expr a, Expr b) {
  return BinaryOp::Make(IRNodeKind::kMod, std::move(a), std::move(b));
}
Expr operator<(Expr a, Expr b) {
  return BinaryOp::Make(IRNodeKind::kLT, std::move(a), std::move(b));
}
Expr operator<=(Expr a, Expr b) {
  return BinaryOp::Make(IRNodeKind::kLE, std::move(a), std::move(b));
}
Expr operator>(Expr a, Expr b) {
  return BinaryOp::Make(IRNodeKind::kLT, std::move(b), std::move(a));
}
Expr operator>=(Expr a, Expr b) {
  return BinaryOp::Make(IRNodeKind::kLE, std::move(b), std::move(a));
}
Expr operator&&(Expr a, Expr b) {
  return BinaryOp::Make(IRNodeKind::kAnd, std::move(a), std::move(b));
}
Expr operator||(Expr a, Expr b) {
  return BinaryOp::Make(IRNodeKind::kOr, std::move(a), std::move(b));
}
Expr operator!(Expr a) { return Not::Make(std::move(a)); }
Expr EQ(Expr a, Expr b) { return BinaryOp::Make(IRNodeKind::kEQ, std::move(a), std::move(b)); }
Expr NE(Expr a, Expr b) { return BinaryOp::Make(IRNodeKind::kNE, std::move(a), std::move(b)); }
Expr Min(Expr a, Expr b) { return BinaryOp::Make(IRNodeKind::kMin, std::move(a), std::move(b)); }
Expr Max(Expr a, Expr b) { return BinaryOp::Make(IRNodeKind::kMax, std::move(a), std::move(b)); }

const int64_t* AsConstInt(const Expr& e) {
  const IntImm* imm = e.as<IntImm>();
  return imm ? &imm->value : nullptr;
}

}  // namespace tunefleet::ir

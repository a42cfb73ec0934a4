#include "toolchain/passes/vectorize_loops.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tuner_core/ir/ir_mutator.h"
#include "tuner_core/ir/ir_printer.h"

namespace tunefleet {
namespace {

using namespace ir;  // NOLINT: pass code reads better with bare node names.

// Rewrites the body of one vectorized loop. Expressions come back either
// scalar (independent of the lane) or as L-lane vectors; ramps are kept as
// Ramp nodes as long as the arithmetic keeps them affine, so the code
// generator can emit contiguous loads and stores.
class LaneVectorizer : public IRMutator {
 public:
  LaneVectorizer(std::string var, Expr min, int lanes)
      : var_(std::move(var)), min_(std::move(min)), lanes_(lanes) {}

  const std::string& error() const { return error_; }

 protected:
  Expr VisitVar(const Expr& e, const Var* op) override {
    if (op->name == var_) return Ramp::Make(min_, IntImm::Make(1), lanes_);
    return e;
  }

  // Keep affine ramps affine through +, - and *; every other operator is
  // rebuilt from its vectorized operands by the base mutator.
  Expr VisitAdd(const Expr& e, const BinaryOp* op) override {
    return AffineOrRebuilt(
        e, op, [&](const Expr& a, const Ramp* ra, const Expr& b, const Ramp* rb) -> Expr {
          if (ra && IsScalar(b)) return Ramp::Make(ra->base + b, ra->stride, lanes_);
          if (rb && IsScalar(a)) return Ramp::Make(a + rb->base, rb->stride, lanes_);
          if (ra && rb) return Ramp::Make(ra->base + rb->base, ra->stride + rb->stride, lanes_);
          return Expr();
        });
  }

  Expr VisitSub(const Expr& e, const BinaryOp* op) override {
    return AffineOrRebuilt(
        e, op, [&](const Expr&, const Ramp* ra, const Expr& b, const Ramp* rb) -> Expr {
          if (ra && IsScalar(b)) return Ramp::Make(ra->base - b, ra->stride, lanes_);
          if (ra && rb) return Ramp::Make(ra->base - rb->base, ra->stride - rb->stride, lanes_);
          return Expr();
        });
  }

  Expr VisitMul(const Expr& e, const BinaryOp* op) override {
    return AffineOrRebuilt(
        e, op, [&](const Expr& a, const Ramp* ra, const Expr& b, const Ramp* rb) -> Expr {
          if (ra && IsScalar(b)) return Ramp::Make(ra->base * b, ra->stride * b, lanes_);
          if (rb && IsScalar(a)) return Ramp::Make(a * rb->base, a * rb->stride, lanes_);
          return Expr();
        });
  }

  Expr VisitRamp(const Expr& e, const Ramp* op) override {
    Fail(absl::StrCat("nested vectorization of ", ToString(e)));
    return e;
  }

  Stmt VisitStore(const Stmt& s, const Store* op) override {
    Expr value = Mutate(op->value), index = Mutate(op->index);
    if (index.type().lanes == 1 && value.type().lanes > 1) {
      Fail(absl::StrCat("store to ", op->buffer, "[", ToString(op->index),
                        "] reduces across the vectorized loop '", var_,
                        "' (its address does not depend on it)"));
      return s;
    }
    if (value.same_as(op->value) && index.same_as(op->index)) return s;
    return Store::Make(op->buffer, std::move(value), std::move(index));
  }

  // A prefetch inside the vectorized loop fetches its first lane's line: the
  // lanes of a unit-stride (or small-stride) ramp share it or the next one.
  Stmt VisitPrefetch(const Stmt& s, const Prefetch* op) override {
    Expr index = Mutate(op->index);
    if (index.same_as(op->index)) return s;
    if (const Ramp* ramp = index.as<Ramp>()) return Prefetch::Make(op->buffer, ramp->base);
    if (index.type().lanes > 1) {
      Fail(absl::StrCat("prefetch of ", op->buffer, "[", ToString(op->index),
                        "] has a non-affine index in the vectorized loop '", var_, "'"));
      return s;
    }
    return Prefetch::Make(op->buffer, std::move(index));
  }

  // A region is marked ready once, outside the vector loop that writes it.
  Stmt VisitOutputReady(const Stmt& s, const OutputReady* op) override {
    Fail(absl::StrCat("the ready region of ", op->buffer, " is inside the vectorized loop '", var_,
                      "'"));
    return s;
  }

  Stmt VisitFor(const Stmt& s, const For* op) override {
    Expr min = Mutate(op->min), extent = Mutate(op->extent);
    if (min.type().lanes > 1 || extent.type().lanes > 1) {
      Fail(absl::StrCat("bounds of loop '", op->var, "' depend on the vectorized loop '", var_,
                        "'"));
      return s;
    }
    if (op->var == var_) return s;  // shadowed; cannot happen in well-formed IR
    Stmt body = Mutate(op->body);
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return s;
    return For::Make(op->var, std::move(min), std::move(extent), op->for_kind, std::move(body));
  }

  Stmt VisitIfThenElse(const Stmt& s, const IfThenElse* op) override {
    Expr condition = Mutate(op->condition);
    if (condition.type().lanes > 1) {
      Fail(absl::StrCat("condition ", ToString(op->condition), " depends on the vectorized loop '",
                        var_, "'"));
      return s;
    }
    return IRMutator::VisitIfThenElse(s, op);
  }

  Stmt VisitAllocate(const Stmt& s, const Allocate* op) override {
    Fail(absl::StrCat("allocation of ", op->buffer, " inside the vectorized loop '", var_, "'"));
    return s;
  }

  Stmt VisitLetStmt(const Stmt& s, const LetStmt* op) override {
    Expr value = Mutate(op->value);
    if (value.type().lanes > 1) {
      // Inline lane-dependent lets so ramps stay visible to loads and stores.
      return Mutate(Substitute(op->body, op->var, op->value));
    }
    return IRMutator::VisitLetStmt(s, op);
  }

 private:
  static bool IsScalar(const Expr& e) { return e.type().lanes == 1; }

  // Mutates the operands; `affine(a, ramp_a, b, ramp_b)` may return a Ramp
  // for them (ramp_x is null where x is not a ramp), else the operator is
  // rebuilt as it is.
  template <typename AffineRule>
  Expr AffineOrRebuilt(const Expr& e, const BinaryOp* op, AffineRule affine) {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (a.same_as(op->a) && b.same_as(op->b)) return e;
    Expr ramp = affine(a, a.as<Ramp>(), b, b.as<Ramp>());
    if (ramp.defined()) return ramp;
    return BinaryOp::Make(op->kind, std::move(a), std::move(b));
  }

  void Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }

  std::string var_;
  Expr min_;
  int lanes_;
  std::string error_;
};

class VectorizeAll : public IRMutator {
 public:
  const std::string& error() const { return error_; }

 protected:
  Stmt VisitFor(const Stmt& s, const For* op) override {
    if (op->for_kind != ForKind::kVectorized) return IRMutator::VisitFor(s, op);
    const int64_t* extent = AsConstInt(op->extent);
    if (extent == nullptr) {
      Fail(absl::StrCat("vectorized loop '", op->var, "' has a non-constant extent ",
                        ToString(op->extent)));
      return s;
    }
    if (*extent < 1 || *extent > 64) {
      Fail(absl::StrCat("vectorized loop '", op->var, "' has extent ", *extent,
                        " (must be in [1, 64])"));
      return s;
    }
    // Inner vectorized loops first, then this one: an inner vectorized loop
    // inside an outer one is reported as nested vectorization.
    Stmt body = Mutate(op->body);
    if (!error_.empty()) return s;
    if (*extent == 1) return Substitute(body, op->var, op->min);
    LaneVectorizer lanes(op->var, op->min, static_cast<int>(*extent));
    Stmt vectorized = lanes.Mutate(body);
    if (!lanes.error().empty()) {
      Fail(lanes.error());
      return s;
    }
    return vectorized;
  }

 private:
  void Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }
  std::string error_;
};

}  // namespace

[[nodiscard]] absl::StatusOr<ir::Stmt> VectorizeLoops(const ir::Stmt& stmt) {
  VectorizeAll pass;
  ir::Stmt result = pass.Mutate(stmt);
  if (!pass.error().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot vectorize: ", pass.error()));
  }
  return result;
}

}  // namespace tunefleet

#include "toolchain/passes/fuse_epilogue.h"

#include <optional>
#include <utility>

#include "common/exp_polynomials.h"
#include "tuner_core/ir/final_store.h"
#include "tuner_core/ir/ir_mutator.h"
#include "tuner_core/ir/ir_visitor.h"

namespace tunefleet {
namespace {

using namespace ir;  // NOLINT

// Counts the stores to `buffer`, marked and not.
class StoreCounter : public IRVisitor {
 public:
  explicit StoreCounter(const std::string& buffer) : buffer_(buffer) {}
  int marked = 0, unmarked = 0;

 protected:
  void VisitLetStmt(const LetStmt* op) override {
    if (std::optional<FinalStoreParts> parts = MatchFinalStore(op); parts.has_value()) {
      if (parts->store->buffer == buffer_) ++marked;
      return;
    }
    IRVisitor::VisitLetStmt(op);
  }
  void VisitStore(const Store* op) override {
    if (op->buffer == buffer_) ++unmarked;
    IRVisitor::VisitStore(op);
  }

 private:
  const std::string& buffer_;
};

// erf(z) = sign(z) (1 - p(t) t e^(-z^2)), t = 1 / (1 + kErfP |z|).
Expr Erf(Expr z) {
  Expr a = Max(z, Expr(0.0) - z);
  Expr t = Expr(1.0) / (Expr(1.0) + Expr(static_cast<double>(kErfP)) * a);
  Expr p = Expr(static_cast<double>(kErfPoly[0]));
  for (int k = 1; k < 5; ++k) p = p * t + Expr(static_cast<double>(kErfPoly[k]));
  Expr v = Expr(1.0) - p * t * Exp::Make(Expr(0.0) - a * a);
  return Select::Make(z < Expr(0.0), Expr(0.0) - v, v);
}

Expr Activate(const StoreEpilogue& e, Expr y) {
  const Expr zero(0.0), one(1.0);
  switch (e.activation) {
    case StoreActivation::kNone:
      return y;
    case StoreActivation::kRelu:
      return Max(y, Expr(0.0));
    case StoreActivation::kClip:
      return Min(Max(y, Expr(static_cast<double>(e.alpha))), Expr(static_cast<double>(e.beta)));
    case StoreActivation::kLeakyRelu:
      return Select::Make(y < Expr(0.0), y * Expr(static_cast<double>(e.alpha)), y);
    case StoreActivation::kHardSigmoid:
    case StoreActivation::kHardSwish: {
      Expr s = Min(Max(y * Expr(static_cast<double>(e.alpha)) + Expr(static_cast<double>(e.beta)),
                       Expr(0.0)),
                   Expr(1.0));
      return e.activation == StoreActivation::kHardSwish ? y * s : s;
    }
    case StoreActivation::kExp:
      return Exp::Make(y);
    case StoreActivation::kSigmoid:
      return one / (one + Exp::Make(zero - y));
    case StoreActivation::kSilu:
      return y * (one / (one + Exp::Make(zero - y)));
    case StoreActivation::kTanh:
      return one - Expr(2.0) * (one / (one + Exp::Make(y * Expr(2.0))));
    case StoreActivation::kGelu:
      return Expr(0.5) * y * (one + Erf(y * Expr(0.70710678)));
    case StoreActivation::kGeluTanh: {
      Expr u = Expr(0.7978845608) * (y + Expr(0.044715) * y * y * y);
      return y * (one / (one + Exp::Make(u * Expr(-2.0))));
    }
    case StoreActivation::kElu:
      return Select::Make(y < zero, Expr(static_cast<double>(e.alpha)) * (Exp::Make(y) - one), y);
  }
  return y;
}

// Rewrites (or, with no epilogue, unwraps) every marked store.
class Fuser : public IRMutator {
 public:
  explicit Fuser(const StoreEpilogue* epilogue) : epilogue_(epilogue) {}

 protected:
  Stmt VisitLetStmt(const Stmt& s, const LetStmt* op) override {
    std::optional<FinalStoreParts> parts = MatchFinalStore(op);
    if (!parts.has_value()) return IRMutator::VisitLetStmt(s, op);
    const Store* store = parts->store;
    if (epilogue_ == nullptr || store->buffer != epilogue_->buffer) {
      return Store::Make(store->buffer, store->value, store->index);
    }
    Expr y = store->value;
    if (epilogue_->bias) y = y + Load::Make(kEpilogueBiasArg, parts->channel);
    if (epilogue_->residual) y = y + Load::Make(kEpilogueResidualArg, store->index);
    y = Activate(*epilogue_, y);
    Stmt fused = Store::Make(store->buffer, y, store->index);
    if (!parts->when.defined()) return fused;
    return IfThenElse::Make(parts->when, fused,
                            Store::Make(store->buffer, store->value, store->index));
  }

 private:
  const StoreEpilogue* epilogue_;
};

}  // namespace

bool FuseEpilogueIntoStores(LoweredFunc* func, const StoreEpilogue* epilogue) {
  bool fuse = false;
  if (epilogue != nullptr) {
    StoreCounter counter(epilogue->buffer);
    counter.Visit(func->body);
    fuse = counter.marked > 0 && counter.unmarked == 0;
  }
  Fuser fuser(fuse ? epilogue : nullptr);
  for (Stmt* stage : {&func->body, &func->prepare, &func->finish}) {
    if (stage->defined()) *stage = fuser.Mutate(*stage);
  }
  func->epilogue_inputs.clear();
  if (fuse && epilogue->bias) func->epilogue_inputs.push_back(kEpilogueBiasArg);
  if (fuse && epilogue->residual) func->epilogue_inputs.push_back(kEpilogueResidualArg);
  return fuse;
}

Stmt RemoveFinalStoreMarks(const Stmt& stmt) { return Fuser(nullptr).Mutate(stmt); }

}  // namespace tunefleet

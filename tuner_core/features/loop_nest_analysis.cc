#include "tuner_core/features/loop_nest_analysis.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tuner_core/ir/ir_visitor.h"

namespace tunefleet::features {
namespace {

using ir::Expr;

// c0 + sum_i coef[i] * loop_var[i] over the open loops (outermost first).
struct Linear {
  double c0 = 0;
  bool has_vars = false;
  std::array<double, kMaxLoopDepth> coef;
};

struct Interval {
  double lo = 0, hi = 0;
};

// What the expression functors need from the walk: the loops open around
// the current node (outermost first) and the lets in scope.
struct OpenLoop {
  const std::string* var;
  double lo, hi;  // range of the loop variable
  double extent;
  int loop;  // index into LoopNestAnalysis::loops
};

struct Scope {
  std::vector<OpenLoop> open;
  std::vector<std::pair<const std::string*, Expr>> lets;

  int OpenLoopOf(const std::string& name) const {
    for (int i = static_cast<int>(open.size()) - 1; i >= 0; --i) {
      if (*open[i].var == name) return i;
    }
    return -1;
  }

  const Expr* LetValueOf(const std::string& name) const {
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
      if (*it->first == name) return &it->second;
    }
    return nullptr;
  }
};

// An index expression as a linear form in the open loop variables.
class LinearFormOf : public ir::ExprFunctor<Linear> {
 public:
  explicit LinearFormOf(const Scope& scope) : scope_(scope), n_(scope.open.size()) {}

  Linear Of(const Expr& e) { return e.defined() ? VisitExpr(e) : Constant(0); }

 protected:
  Linear VisitIntImm(const ir::IntImm* op) override {
    return Constant(static_cast<double>(op->value));
  }
  Linear VisitFloatImm(const ir::FloatImm* op) override { return Constant(op->value); }
  Linear VisitVar(const ir::Var* op) override {
    const int loop = scope_.OpenLoopOf(op->name);
    if (loop >= 0) {
      Linear l = Constant(0);
      l.coef[loop] = 1;
      l.has_vars = true;
      return l;
    }
    if (const Expr* value = scope_.LetValueOf(op->name)) return Of(*value);
    return Constant(0);  // a free parameter: no loop dependence
  }
  Linear VisitAdd(const ir::BinaryOp* op) override { return Sum(op, 1.0); }
  Linear VisitSub(const ir::BinaryOp* op) override { return Sum(op, -1.0); }
  Linear VisitMul(const ir::BinaryOp* op) override {
    Linear a = Of(op->a);
    Linear b = Of(op->b);
    if (!b.has_vars) {
      Scale(a, b.c0);
      return a;
    }
    if (!a.has_vars) {
      Scale(b, a.c0);
      return b;
    }
    // A product of two loop-dependent terms: first order around the origin.
    Linear l = Constant(a.c0 * b.c0);
    for (size_t i = 0; i < n_; ++i) l.coef[i] = a.coef[i] * b.c0 + b.coef[i] * a.c0;
    l.has_vars = true;
    return l;
  }
  Linear VisitDiv(const ir::BinaryOp* op) override {
    Linear a = Of(op->a);
    const Linear b = Of(op->b);
    if (!b.has_vars && b.c0 != 0) Scale(a, 1.0 / b.c0);
    return a;
  }
  Linear VisitMod(const ir::BinaryOp* op) override { return Of(op->a); }
  Linear VisitMin(const ir::BinaryOp* op) override { return Of(op->a); }
  Linear VisitMax(const ir::BinaryOp* op) override { return Of(op->a); }
  // Comparisons, logic and loads are data, not index math.
  Linear VisitEQ(const ir::BinaryOp*) override { return Constant(0); }
  Linear VisitNE(const ir::BinaryOp*) override { return Constant(0); }
  Linear VisitLT(const ir::BinaryOp*) override { return Constant(0); }
  Linear VisitLE(const ir::BinaryOp*) override { return Constant(0); }
  Linear VisitAnd(const ir::BinaryOp*) override { return Constant(0); }
  Linear VisitOr(const ir::BinaryOp*) override { return Constant(0); }
  Linear VisitNot(const ir::Not*) override { return Constant(0); }
  Linear VisitLoad(const ir::Load*) override { return Constant(0); }
  Linear VisitSelect(const ir::Select* op) override { return Of(op->true_value); }
  Linear VisitCast(const ir::Cast* op) override { return Of(op->value); }
  Linear VisitExp(const ir::Exp*) override { return Constant(0); }
  Linear VisitRamp(const ir::Ramp* op) override { return Of(op->base); }
  Linear VisitBroadcast(const ir::Broadcast* op) override { return Of(op->value); }

 private:
  Linear Constant(double value) const {
    Linear l;
    l.c0 = value;
    std::fill_n(l.coef.begin(), n_, 0.0);
    return l;
  }

  void Scale(Linear& l, double factor) const {
    l.c0 *= factor;
    for (size_t i = 0; i < n_; ++i) l.coef[i] *= factor;
  }

  Linear Sum(const ir::BinaryOp* op, double sign) {
    Linear a = Of(op->a);
    const Linear b = Of(op->b);
    a.c0 += sign * b.c0;
    for (size_t i = 0; i < n_; ++i) a.coef[i] += sign * b.coef[i];
    a.has_vars = a.has_vars || b.has_vars;
    return a;
  }

  const Scope& scope_;
  const size_t n_;
};

// The range an integer expression takes over the open loops; {0, 0} where
// it is not index arithmetic.
class BoundOf : public ir::ExprFunctor<Interval> {
 public:
  explicit BoundOf(const Scope& scope) : scope_(scope) {}

  Interval Of(const Expr& e) { return e.defined() ? VisitExpr(e) : Interval{}; }

 protected:
  Interval VisitIntImm(const ir::IntImm* op) override {
    const double v = static_cast<double>(op->value);
    return {v, v};
  }
  Interval VisitVar(const ir::Var* op) override {
    const int loop = scope_.OpenLoopOf(op->name);
    if (loop >= 0) return {scope_.open[loop].lo, scope_.open[loop].hi};
    if (const Expr* value = scope_.LetValueOf(op->name)) return Of(*value);
    return {};
  }
  Interval VisitAdd(const ir::BinaryOp* op) override {
    const Interval a = Of(op->a), b = Of(op->b);
    return {a.lo + b.lo, a.hi + b.hi};
  }
  Interval VisitSub(const ir::BinaryOp* op) override {
    const Interval a = Of(op->a), b = Of(op->b);
    return {a.lo - b.hi, a.hi - b.lo};
  }
  Interval VisitMul(const ir::BinaryOp* op) override {
    const Interval a = Of(op->a), b = Of(op->b);
    const double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
  }
  Interval VisitDiv(const ir::BinaryOp* op) override {
    const Interval a = Of(op->a), b = Of(op->b);
    if (b.lo > 0) return {std::floor(a.lo / b.hi), std::floor(a.hi / b.lo)};
    return a;
  }
  Interval VisitMod(const ir::BinaryOp* op) override {
    const Interval a = Of(op->a), b = Of(op->b);
    if (b.lo > 0 && a.lo >= 0 && a.hi < b.lo) return a;
    return {0, std::max(0.0, b.hi - 1)};
  }
  Interval VisitMin(const ir::BinaryOp* op) override {
    const Interval a = Of(op->a), b = Of(op->b);
    return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
  }
  Interval VisitMax(const ir::BinaryOp* op) override {
    const Interval a = Of(op->a), b = Of(op->b);
    return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
  }
  Interval VisitSelect(const ir::Select* op) override {
    const Interval a = Of(op->true_value), b = Of(op->false_value);
    return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
  }
  Interval VisitCast(const ir::Cast* op) override { return Of(op->value); }
  Interval VisitExp(const ir::Exp*) override { return {}; }
  // Not integer index arithmetic.
  Interval VisitFloatImm(const ir::FloatImm*) override { return {}; }
  Interval VisitEQ(const ir::BinaryOp*) override { return {}; }
  Interval VisitNE(const ir::BinaryOp*) override { return {}; }
  Interval VisitLT(const ir::BinaryOp*) override { return {}; }
  Interval VisitLE(const ir::BinaryOp*) override { return {}; }
  Interval VisitAnd(const ir::BinaryOp*) override { return {}; }
  Interval VisitOr(const ir::BinaryOp*) override { return {}; }
  Interval VisitNot(const ir::Not*) override { return {}; }
  Interval VisitLoad(const ir::Load*) override { return {}; }
  Interval VisitRamp(const ir::Ramp*) override { return {}; }
  Interval VisitBroadcast(const ir::Broadcast*) override { return {}; }

 private:
  const Scope& scope_;
};

class Analyzer : public ir::IRVisitor {
 public:
  [[nodiscard]] absl::StatusOr<LoopNestAnalysis> Run(const ir::Stmt& body) {
    Visit(body);
    if (!status_.ok()) return status_;
    return std::move(out_);
  }

 protected:
  void VisitFor(const ir::For* op) override {
    if (!status_.ok()) return;
    std::vector<OpenLoop>& open = scope_.open;
    if (static_cast<int>(open.size()) >= kMaxLoopDepth) {
      status_ = absl::InvalidArgumentError(absl::StrCat("loop nest deeper than ", kMaxLoopDepth,
                                                        " loops (at loop \"", op->var, "\")"));
      return;
    }
    const Interval min = BoundOf(scope_).Of(op->min);
    const Interval extent = BoundOf(scope_).Of(op->extent);
    const int64_t extent_bound = std::max<int64_t>(0, static_cast<int64_t>(std::floor(extent.hi)));
    LoopInfo loop;
    loop.var = op->var;
    loop.depth = static_cast<int>(open.size());
    loop.parent = open.empty() ? -1 : open.back().loop;
    loop.extent = extent_bound;
    loop.kind = op->for_kind;
    loop.iterations = (open.empty() ? 1.0 : out_.loops[open.back().loop].iterations) * extent_bound;
    out_.loops.push_back(std::move(loop));
    open.push_back(OpenLoop{&op->var, min.lo, min.hi + std::max<int64_t>(extent_bound - 1, 0),
                            static_cast<double>(extent_bound),
                            static_cast<int>(out_.loops.size()) - 1});
    Visit(op->body);
    open.pop_back();
  }

  void VisitStore(const ir::Store* op) override {
    Access(op->buffer, op->index);
    Visit(op->value);
  }

  void VisitLoad(const ir::Load* op) override {
    Access(op->buffer, op->index);
    Visit(op->index);  // an index may itself load (indirect access)
  }

  // A prefetch touches its line as a load would (it occupies a load port).
  void VisitPrefetch(const ir::Prefetch* op) override {
    Access(op->buffer, op->index);
    Visit(op->index);
  }

  // A ready mark costs nothing in a kernel built for measurement.
  void VisitOutputReady(const ir::OutputReady*) override {}

  void VisitLetStmt(const ir::LetStmt* op) override {
    scope_.lets.emplace_back(&op->var, op->value);
    Visit(op->body);
    scope_.lets.pop_back();
  }

  // Conditions are index comparisons: only the branches touch memory.
  void VisitIfThenElse(const ir::IfThenElse* op) override {
    Visit(op->then_case);
    Visit(op->else_case);
  }

 private:
  int Intern(const std::string& buffer) {
    for (size_t i = 0; i < out_.buffers.size(); ++i) {
      if (out_.buffers[i] == buffer) return static_cast<int>(i);
    }
    out_.buffers.push_back(buffer);
    return static_cast<int>(out_.buffers.size()) - 1;
  }

  // One load or store, executed once per iteration of every open loop.
  void Access(const std::string& buffer, const Expr& index) {
    const std::vector<OpenLoop>& open = scope_.open;
    if (open.empty() || !status_.ok()) return;
    const Linear l = LinearFormOf(scope_).Of(index);
    const int id = Intern(buffer);
    const double lanes = index.defined() ? index.type().lanes : 1;
    double accesses = lanes, product = lanes, span = 0;
    for (int j = static_cast<int>(open.size()) - 1; j >= 0; --j) {
      const double extent = open[j].extent;
      const double stride = std::fabs(l.coef[j]);
      accesses *= extent;
      if (stride != 0) {
        product *= extent;
        span += stride * std::max(extent - 1, 0.0);
      }
      // Distinct elements: the index range swept, or the number of distinct
      // index combinations when they overlap less than that.
      const double elements = accesses == 0 ? 0 : std::min(product, span + lanes);
      std::vector<BufferTouch>& touches = out_.loops[open[j].loop].touches;
      BufferTouch* touch = nullptr;
      for (BufferTouch& t : touches) {
        if (t.buffer == id) touch = &t;
      }
      if (touch == nullptr) {
        touches.push_back(BufferTouch{id, 0, 0, 0});
        touch = &touches.back();
      }
      touch->accesses += accesses;
      touch->bytes = std::max(touch->bytes, elements * 4.0);
      if (stride != 0 && (touch->stride == 0 || stride < touch->stride)) touch->stride = stride;
    }
  }

  Scope scope_;
  LoopNestAnalysis out_;
  absl::Status status_;
};

}  // namespace

[[nodiscard]] absl::StatusOr<LoopNestAnalysis> AnalyzeLoopNest(const ir::LoweredFunc& func) {
  if (!func.body.defined()) {
    return absl::InvalidArgumentError(absl::StrCat("function \"", func.name, "\" has no body"));
  }
  Analyzer analyzer;
  return analyzer.Run(func.body);
}

}  // namespace tunefleet::features

#include "tuner_core/features/loop_nest_analysis.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tuner_core/ir/ir_visitor.h"

namespace tunefleet::features {
namespace {

using ir::Expr;
using ir::IRNodeKind;

// c0 + sum_i coef[i] * loop_var[i] over the open loops (outermost first).
struct Linear {
  double c0 = 0;
  bool has_vars = false;
  std::array<double, kMaxLoopDepth> coef;
};

struct Interval {
  double lo = 0, hi = 0;
};

class Analyzer : public ir::IRVisitor {
 public:
  absl::StatusOr<LoopNestAnalysis> Run(const ir::Stmt& body) {
    Visit(body);
    if (!status_.ok()) return status_;
    return std::move(out_);
  }

 protected:
  void VisitFor(const ir::For* op) override {
    if (!status_.ok()) return;
    if (static_cast<int>(open_.size()) >= kMaxLoopDepth) {
      status_ = absl::InvalidArgumentError(
          absl::StrCat("loop nest deeper than ", kMaxLoopDepth, " loops (at loop \"", op->var, "\")"));
      return;
    }
    const Interval min = Bound(op->min);
    const Interval extent = Bound(op->extent);
    const int64_t extent_bound = std::max<int64_t>(0, static_cast<int64_t>(std::floor(extent.hi)));
    LoopInfo loop;
    loop.var = op->var;
    loop.depth = static_cast<int>(open_.size());
    loop.parent = open_.empty() ? -1 : open_.back().loop;
    loop.extent = extent_bound;
    loop.kind = op->for_kind;
    loop.iterations = (open_.empty() ? 1.0 : out_.loops[open_.back().loop].iterations) * extent_bound;
    out_.loops.push_back(std::move(loop));
    open_.push_back(OpenLoop{&op->var, min.lo, min.hi + std::max<int64_t>(extent_bound - 1, 0),
                             static_cast<double>(extent_bound), static_cast<int>(out_.loops.size()) - 1});
    Visit(op->body);
    open_.pop_back();
  }

  void VisitStore(const ir::Store* op) override {
    Access(op->buffer, op->index);
    Visit(op->value);
  }

  void VisitLoad(const ir::Load* op) override {
    Access(op->buffer, op->index);
    Visit(op->index);  // an index may itself load (indirect access)
  }

  void VisitLetStmt(const ir::LetStmt* op) override {
    lets_.emplace_back(&op->var, op->value);
    Visit(op->body);
    lets_.pop_back();
  }

  // Conditions are index comparisons: only the branches touch memory.
  void VisitIfThenElse(const ir::IfThenElse* op) override {
    Visit(op->then_case);
    Visit(op->else_case);
  }

 private:
  struct OpenLoop {
    const std::string* var;
    double lo, hi;  // range of the loop variable
    double extent;
    int loop;       // index into out_.loops
  };

  int OpenLoopOf(const std::string& name) const {
    for (int i = static_cast<int>(open_.size()) - 1; i >= 0; --i) {
      if (*open_[i].var == name) return i;
    }
    return -1;
  }

  const Expr* LetValueOf(const std::string& name) const {
    for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) {
      if (*it->first == name) return &it->second;
    }
    return nullptr;
  }

  Linear Constant(double value) const {
    Linear l;
    l.c0 = value;
    std::fill_n(l.coef.begin(), open_.size(), 0.0);
    return l;
  }

  static void Scale(Linear& l, double factor, size_t n) {
    l.c0 *= factor;
    for (size_t i = 0; i < n; ++i) l.coef[i] *= factor;
  }

  Linear Lin(const Expr& e) const {
    const size_t n = open_.size();
    if (!e.defined()) return Constant(0);
    switch (e.kind()) {
      case IRNodeKind::kIntImm: return Constant(static_cast<double>(e.as<ir::IntImm>()->value));
      case IRNodeKind::kFloatImm: return Constant(e.as<ir::FloatImm>()->value);
      case IRNodeKind::kVar: {
        const std::string& name = e.as<ir::Var>()->name;
        const int loop = OpenLoopOf(name);
        if (loop >= 0) {
          Linear l = Constant(0);
          l.coef[loop] = 1;
          l.has_vars = true;
          return l;
        }
        if (const Expr* value = LetValueOf(name)) return Lin(*value);
        return Constant(0);  // a free parameter: no loop dependence
      }
      case IRNodeKind::kAdd:
      case IRNodeKind::kSub: {
        const auto* op = static_cast<const ir::BinaryOp*>(e.get());
        Linear a = Lin(op->a);
        const Linear b = Lin(op->b);
        const double sign = e.kind() == IRNodeKind::kAdd ? 1.0 : -1.0;
        a.c0 += sign * b.c0;
        for (size_t i = 0; i < n; ++i) a.coef[i] += sign * b.coef[i];
        a.has_vars = a.has_vars || b.has_vars;
        return a;
      }
      case IRNodeKind::kMul: {
        const auto* op = static_cast<const ir::BinaryOp*>(e.get());
        Linear a = Lin(op->a);
        Linear b = Lin(op->b);
        if (!b.has_vars) {
          Scale(a, b.c0, n);
          return a;
        }
        if (!a.has_vars) {
          Scale(b, a.c0, n);
          return b;
        }
        // A product of two loop-dependent terms: first order around the origin.
        Linear l = Constant(a.c0 * b.c0);
        for (size_t i = 0; i < n; ++i) l.coef[i] = a.coef[i] * b.c0 + b.coef[i] * a.c0;
        l.has_vars = true;
        return l;
      }
      case IRNodeKind::kDiv: {
        const auto* op = static_cast<const ir::BinaryOp*>(e.get());
        Linear a = Lin(op->a);
        const Linear b = Lin(op->b);
        if (!b.has_vars && b.c0 != 0) Scale(a, 1.0 / b.c0, n);
        return a;
      }
      case IRNodeKind::kMod:
      case IRNodeKind::kMin:
      case IRNodeKind::kMax:
        return Lin(static_cast<const ir::BinaryOp*>(e.get())->a);
      case IRNodeKind::kSelect: return Lin(e.as<ir::Select>()->true_value);
      case IRNodeKind::kCast: return Lin(e.as<ir::Cast>()->value);
      case IRNodeKind::kRamp: return Lin(e.as<ir::Ramp>()->base);
      case IRNodeKind::kBroadcast: return Lin(e.as<ir::Broadcast>()->value);
      default: return Constant(0);  // loads, comparisons: data, not index math
    }
  }

  Interval Bound(const Expr& e) const {
    if (!e.defined()) return {};
    switch (e.kind()) {
      case IRNodeKind::kIntImm: {
        const double v = static_cast<double>(e.as<ir::IntImm>()->value);
        return {v, v};
      }
      case IRNodeKind::kVar: {
        const std::string& name = e.as<ir::Var>()->name;
        const int loop = OpenLoopOf(name);
        if (loop >= 0) return {open_[loop].lo, open_[loop].hi};
        if (const Expr* value = LetValueOf(name)) return Bound(*value);
        return {};
      }
      case IRNodeKind::kAdd:
      case IRNodeKind::kSub:
      case IRNodeKind::kMul:
      case IRNodeKind::kDiv:
      case IRNodeKind::kMod:
      case IRNodeKind::kMin:
      case IRNodeKind::kMax: {
        const auto* op = static_cast<const ir::BinaryOp*>(e.get());
        const Interval a = Bound(op->a), b = Bound(op->b);
        switch (e.kind()) {
          case IRNodeKind::kAdd: return {a.lo + b.lo, a.hi + b.hi};
          case IRNodeKind::kSub: return {a.lo - b.hi, a.hi - b.lo};
          case IRNodeKind::kMul: {
            const double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
            return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
          }
          case IRNodeKind::kDiv:
            if (b.lo > 0) return {std::floor(a.lo / b.hi), std::floor(a.hi / b.lo)};
            return a;
          case IRNodeKind::kMod:
            if (b.lo > 0 && a.lo >= 0 && a.hi < b.lo) return a;
            return {0, std::max(0.0, b.hi - 1)};
          case IRNodeKind::kMin: return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
          default: return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
        }
      }
      case IRNodeKind::kSelect: {
        const auto* op = e.as<ir::Select>();
        const Interval a = Bound(op->true_value), b = Bound(op->false_value);
        return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
      }
      case IRNodeKind::kCast: return Bound(e.as<ir::Cast>()->value);
      default: return {};
    }
  }

  int Intern(const std::string& buffer) {
    for (size_t i = 0; i < out_.buffers.size(); ++i) {
      if (out_.buffers[i] == buffer) return static_cast<int>(i);
    }
    out_.buffers.push_back(buffer);
    return static_cast<int>(out_.buffers.size()) - 1;
  }

  // One load or store, executed once per iteration of every open loop.
  void Access(const std::string& buffer, const Expr& index) {
    if (open_.empty() || !status_.ok()) return;
    const Linear l = Lin(index);
    const int id = Intern(buffer);
    const double lanes = index.defined() ? index.type().lanes : 1;
    double accesses = lanes, product = lanes, span = 0;
    for (int j = static_cast<int>(open_.size()) - 1; j >= 0; --j) {
      const double extent = open_[j].extent;
      const double stride = std::fabs(l.coef[j]);
      accesses *= extent;
      if (stride != 0) {
        product *= extent;
        span += stride * std::max(extent - 1, 0.0);
      }
      // Distinct elements: the index range swept, or the number of distinct
      // index combinations when they overlap less than that.
      const double elements = accesses == 0 ? 0 : std::min(product, span + lanes);
      std::vector<BufferTouch>& touches = out_.loops[open_[j].loop].touches;
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

  std::vector<OpenLoop> open_;
  std::vector<std::pair<const std::string*, Expr>> lets_;
  LoopNestAnalysis out_;
  absl::Status status_;
};

}  // namespace

absl::StatusOr<LoopNestAnalysis> AnalyzeLoopNest(const ir::LoweredFunc& func) {
  if (!func.body.defined()) {
    return absl::InvalidArgumentError(absl::StrCat("function \"", func.name, "\" has no body"));
  }
  Analyzer analyzer;
  return analyzer.Run(func.body);
}

}  // namespace tunefleet::features

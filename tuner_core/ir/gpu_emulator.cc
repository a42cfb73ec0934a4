#include "tuner_core/ir/gpu_emulator.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tuner_core/ir/ir_visitor.h"

namespace tunefleet::ir {
namespace {

struct BufferView {
  float* data = nullptr;
  int64_t size = 0;
};

// A barrier whose party shrinks when a thread finishes, so threads that
// leave early do not hang the ones still waiting.
class BlockBarrier {
 public:
  explicit BlockBarrier(int parties) : parties_(parties) {}
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const int64_t generation = generation_;
    if (++arrived_ >= parties_) return Release();
    cv_.wait(lock, [&] { return generation_ != generation; });
  }
  void Leave() {
    std::unique_lock<std::mutex> lock(mu_);
    --parties_;
    if (arrived_ > 0 && arrived_ >= parties_) Release();
  }

 private:
  void Release() {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  int parties_;
  int arrived_ = 0;
  int64_t generation_ = 0;
};

struct Shared {
  std::mutex error_mu;
  std::string error;
  void Fail(std::string message) {
    std::lock_guard<std::mutex> lock(error_mu);
    if (error.empty()) error = std::move(message);
  }
  bool failed() {
    std::lock_guard<std::mutex> lock(error_mu);
    return !error.empty();
  }
};

// One interpreter per (GPU or host) thread; scalar values as double
// (int64 index math is exact in double far beyond any tensor size here).
class Interpreter : public ExprFunctor<double>, public StmtFunctor<void> {
 public:
  Interpreter(Shared* shared, BlockBarrier* barrier) : shared_(shared), barrier_(barrier) {}

  std::unordered_map<std::string, std::vector<int64_t>> vars;
  std::unordered_map<std::string, std::vector<BufferView>> buffers;

  double Eval(const Expr& e) {
    if (e.type().lanes != 1) return FailVector();
    return VisitExpr(e);
  }

  void Exec(const Stmt& s) {
    if (!s.defined() || shared_->failed()) return;
    VisitStmt(s);
  }

 protected:
  double VisitIntImm(const IntImm* op) override { return static_cast<double>(op->value); }
  double VisitFloatImm(const FloatImm* op) override { return static_cast<float>(op->value); }
  double VisitVar(const Var* op) override {
    auto it = vars.find(op->name);
    if (it == vars.end() || it->second.empty()) {
      Fail(absl::StrCat("unbound variable ", op->name));
      return 0;
    }
    return static_cast<double>(it->second.back());
  }
  double VisitAdd(const BinaryOp* op) override {
    return Arithmetic(op, [](double a, double b) { return a + b; });
  }
  double VisitSub(const BinaryOp* op) override {
    return Arithmetic(op, [](double a, double b) { return a - b; });
  }
  double VisitMul(const BinaryOp* op) override {
    return Arithmetic(op, [](double a, double b) { return a * b; });
  }
  double VisitDiv(const BinaryOp* op) override {
    const auto [a, b] = Operands(op);
    if (!op->a.type().is_int()) return static_cast<float>(a / b);
    if (b == 0) return Fail("integer division by zero"), 0.0;
    return static_cast<double>(static_cast<int64_t>(a) / static_cast<int64_t>(b));
  }
  double VisitMod(const BinaryOp* op) override {
    const auto [a, b] = Operands(op);
    if (b == 0) return Fail("integer modulo by zero"), 0.0;
    return static_cast<double>(static_cast<int64_t>(a) % static_cast<int64_t>(b));
  }
  double VisitMin(const BinaryOp* op) override {
    const auto [a, b] = Operands(op);
    return std::min(a, b);
  }
  double VisitMax(const BinaryOp* op) override {
    const auto [a, b] = Operands(op);
    return std::max(a, b);
  }
  double VisitEQ(const BinaryOp* op) override {
    const auto [a, b] = Operands(op);
    return a == b;
  }
  double VisitNE(const BinaryOp* op) override {
    const auto [a, b] = Operands(op);
    return a != b;
  }
  double VisitLT(const BinaryOp* op) override {
    const auto [a, b] = Operands(op);
    return a < b;
  }
  double VisitLE(const BinaryOp* op) override {
    const auto [a, b] = Operands(op);
    return a <= b;
  }
  double VisitAnd(const BinaryOp* op) override {
    const auto [a, b] = Operands(op);  // both sides: no short circuit
    return (a != 0) && (b != 0);
  }
  double VisitOr(const BinaryOp* op) override {
    const auto [a, b] = Operands(op);
    return (a != 0) || (b != 0);
  }
  double VisitNot(const Not* op) override { return Eval(op->a) == 0 ? 1 : 0; }
  double VisitSelect(const Select* op) override {
    return Eval(op->condition) != 0 ? Eval(op->true_value) : Eval(op->false_value);
  }
  double VisitCast(const Cast* op) override {
    const double v = Eval(op->value);
    if (op->type.is_int()) return static_cast<double>(static_cast<int64_t>(v));
    if (op->type.is_float()) return static_cast<float>(v);
    return v != 0 ? 1 : 0;
  }
  double VisitExp(const Exp* op) override { return std::exp(static_cast<float>(Eval(op->value))); }
  double VisitLoad(const Load* op) override {
    float* p = Address(op->buffer, Eval(op->index));
    return p == nullptr ? 0.0 : *p;
  }
  double VisitRamp(const Ramp*) override { return FailVector(); }
  double VisitBroadcast(const Broadcast*) override { return FailVector(); }

  void VisitFor(const For* op) override {
    if (IsThreadBound(op->for_kind)) return LaunchThreads(op);
    const int64_t min = static_cast<int64_t>(Eval(op->min));
    const int64_t extent = static_cast<int64_t>(Eval(op->extent));
    auto& slot = vars[op->var];
    slot.push_back(min);
    for (int64_t i = min; i < min + extent && !shared_->failed(); ++i) {
      slot.back() = i;
      Exec(op->body);
    }
    vars[op->var].pop_back();
  }
  void VisitStore(const Store* op) override {
    const double value = Eval(op->value);
    if (float* p = Address(op->buffer, Eval(op->index))) *p = static_cast<float>(value);
  }
  void VisitAllocate(const Allocate* op) override {
    // kShared is allocated by the block's host interpreter before the
    // threads start (it sees the Allocate first), so each kind is just a
    // fresh buffer in the scope of whoever meets it.
    auto storage = std::make_unique<float[]>(static_cast<size_t>(op->num_elements));
    std::fill_n(storage.get(), op->num_elements, std::nanf(""));
    buffers[op->buffer].push_back({storage.get(), op->num_elements});
    Exec(op->body);
    buffers[op->buffer].pop_back();
  }
  void VisitBlock(const Block* op) override {
    for (const Stmt& child : op->stmts) Exec(child);
  }
  void VisitIfThenElse(const IfThenElse* op) override {
    if (Eval(op->condition) != 0) {
      Exec(op->then_case);
    } else {
      Exec(op->else_case);
    }
  }
  void VisitLetStmt(const LetStmt* op) override {
    vars[op->var].push_back(static_cast<int64_t>(Eval(op->value)));
    Exec(op->body);
    vars[op->var].pop_back();
  }
  void VisitBarrier(const Barrier*) override {
    if (barrier_ == nullptr) return Fail("barrier outside thread-bound loops");
    barrier_->Wait();
  }
  void VisitPrefetch(const Prefetch*) override {}        // a cache hint: nothing to emulate
  void VisitOutputReady(const OutputReady*) override {}  // GPU kernels have no epilogue hook

 private:
  void Fail(std::string message) { shared_->Fail(std::move(message)); }

  float* Address(const std::string& buffer, double index) {
    auto it = buffers.find(buffer);
    if (it == buffers.end() || it->second.empty()) {
      Fail(absl::StrCat("unknown buffer ", buffer));
      return nullptr;
    }
    const BufferView& view = it->second.back();
    const int64_t i = static_cast<int64_t>(index);
    if (i < 0 || i >= view.size) {
      Fail(absl::StrCat("access to ", buffer, "[", i, "] outside its ", view.size, " elements"));
      return nullptr;
    }
    return view.data + i;
  }

  double FailVector() {
    Fail("vector expression: the emulator runs templates before vectorization");
    return 0;
  }

  // Both operands, left first (so the first failure is the one reported).
  std::pair<double, double> Operands(const BinaryOp* op) {
    const double a = Eval(op->a);
    const double b = Eval(op->b);
    return {a, b};
  }

  // Integer arithmetic is exact in double; fp32 arithmetic rounds to float.
  template <typename Op>
  double Arithmetic(const BinaryOp* op, Op apply) {
    const auto [a, b] = Operands(op);
    const double result = apply(a, b);
    return op->a.type().is_int() ? result : static_cast<float>(result);
  }

  // The thread-bound loops directly nested here become one OS thread per
  // point of their product; each runs the innermost body.
  void LaunchThreads(const For* outer) {
    if (barrier_ != nullptr) return Fail("thread-bound loop nested inside another's body");
    std::vector<const For*> chain;
    Stmt body;
    for (const For* f = outer; f != nullptr && IsThreadBound(f->for_kind); f = f->body.as<For>()) {
      chain.push_back(f);
      body = f->body;
    }
    int64_t count = 1;
    std::vector<int64_t> extents;
    for (const For* f : chain) {
      extents.push_back(static_cast<int64_t>(Eval(f->extent)));
      count *= extents.back();
    }
    BlockBarrier barrier(static_cast<int>(count));
    std::vector<std::thread> threads;
    threads.reserve(count);
    for (int64_t linear = 0; linear < count; ++linear) {
      auto thread_vars = vars;
      int64_t rest = linear;
      for (int i = static_cast<int>(chain.size()) - 1; i >= 0; --i) {
        thread_vars[chain[i]->var].push_back(rest % extents[i]);
        rest /= extents[i];
      }
      threads.emplace_back([this, &barrier, body, thread_vars = std::move(thread_vars)]() mutable {
        Interpreter thread(shared_, &barrier);
        thread.vars = std::move(thread_vars);
        thread.buffers = buffers;
        thread.Exec(body);
        barrier.Leave();
      });
    }
    for (std::thread& t : threads) t.join();
  }

  Shared* shared_;
  BlockBarrier* barrier_;
};

}  // namespace

[[nodiscard]] absl::Status EmulateGpuKernel(const LoweredFunc& func,
                                            const std::vector<float*>& tensors) {
  if (tensors.size() != func.args.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel ", func.name, " takes ", func.args.size(), " tensors, got ", tensors.size()));
  }
  Shared shared;
  Interpreter host(&shared, nullptr);
  for (size_t i = 0; i < tensors.size(); ++i) {
    host.buffers[func.args[i].name].push_back({tensors[i], func.args[i].NumElements()});
  }
  host.Exec(func.body);
  if (!shared.error.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("kernel ", func.name, ": ", shared.error));
  }
  return absl::OkStatus();
}

}  // namespace tunefleet::ir

#include "toolchain/passes/unroll_loops.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tuner_core/ir/ir_mutator.h"
#include "tuner_core/ir/ir_printer.h"

namespace tunefleet {
namespace {

using namespace ir;  // NOLINT

class Unroller : public IRMutator {
 public:
  explicit Unroller(int64_t max_unroll) : max_unroll_(max_unroll) {}
  const std::string& error() const { return error_; }

 protected:
  Stmt VisitFor(const Stmt& s, const For* op) override {
    if (op->for_kind != ForKind::kUnrolled) return IRMutator::VisitFor(s, op);
    const int64_t* extent = AsConstInt(op->extent);
    if (extent == nullptr) {
      if (error_.empty()) {
        error_ = absl::StrCat("unrolled loop '", op->var, "' has a non-constant extent ",
                              ToString(op->extent));
      }
      return s;
    }
    if (*extent > max_unroll_) {
      if (error_.empty()) {
        error_ = absl::StrCat("unrolled loop '", op->var, "' has extent ", *extent,
                              ", above the limit of ", max_unroll_);
      }
      return s;
    }
    Stmt body = Mutate(op->body);  // inner unrolled loops first
    std::vector<Stmt> copies;
    copies.reserve(*extent);
    for (int64_t i = 0; i < *extent; ++i) {
      copies.push_back(Substitute(body, op->var, op->min + IntImm::Make(i)));
    }
    return Block::Make(std::move(copies));
  }

 private:
  int64_t max_unroll_;
  std::string error_;
};

}  // namespace

[[nodiscard]] absl::StatusOr<ir::Stmt> UnrollLoops(const ir::Stmt& stmt, int64_t max_unroll) {
  Unroller pass(max_unroll);
  ir::Stmt result = pass.Mutate(stmt);
  if (!pass.error().empty()) return absl::InvalidArgumentError(pass.error());
  if (!result.defined()) return absl::InvalidArgumentError("unrolling produced an empty body");
  return result;
}

}  // namespace tunefleet

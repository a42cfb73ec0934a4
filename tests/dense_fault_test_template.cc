#include "tuner_core/templates/dense_fault_test_template.h"

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/workloads/dense.h"

namespace tunefleet {
namespace {

using namespace ir;  // NOLINT

}  // namespace

bool TestTemplatesEnabled() {
  const char* value = std::getenv("TUNEFLEET_ENABLE_TEST_TEMPLATES");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

absl::StatusOr<ConfigSpace> DenseFaultTestTemplate::DefineSpace(const Workload& workload) const {
  TF_RETURN_IF_ERROR(DenseWorkload::From(workload, name_).status());
  ConfigSpace space;
  TF_RETURN_IF_ERROR(space.DefineKnob("fault", {"none", "segv", "hang"}));
  return space;
}

absl::StatusOr<LoweredFunc> DenseFaultTestTemplate::Instantiate(const Workload& workload,
                                                                const Config& config) const {
  TF_ASSIGN_OR_RETURN(const DenseWorkload* dense, DenseWorkload::From(workload, name_));
  TF_ASSIGN_OR_RETURN(std::string fault, config.GetString("fault"));
  if (fault != "none" && fault != "segv" && fault != "hang") {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": unknown fault \"", fault, "\""));
  }
  const int64_t M = dense->m(), N = dense->n(), K = dense->k();
  Expr y = Var::Make("y"), x = Var::Make("x"), k = Var::Make("k");
  Expr b_index = dense->layout() == DenseWorkload::Layout::kNK ? x * K + k : k * N + x;

  Stmt zero = For::Make("y", 0, M, ForKind::kSerial,
                        For::Make("x", 0, N, ForKind::kSerial, Store::Make("C", 0.0, y * N + x)));
  Stmt update = Store::Make(
      "C", Load::Make("C", y * N + x) + Load::Make("A", y * K + k) * Load::Make("B", b_index), y * N + x);
  Stmt accumulate = For::Make(
      "y", 0, M, ForKind::kSerial,
      For::Make("x", 0, N, ForKind::kSerial, For::Make("k", 0, K, ForKind::kSerial, update)));

  std::vector<Stmt> body;
  if (fault == "segv") body.push_back(Store::Make("C", 1.0, Expr(kFaultIndex)));
  body.push_back(zero);
  if (fault == "hang") {
    // Each repeat accumulates into C again: a side effect that depends on
    // every iteration, so the loop can be neither deleted nor folded.
    body.push_back(For::Make("rep", 0, Expr(kHangRepeats), ForKind::kSerial, accumulate));
  } else {
    body.push_back(accumulate);
  }

  LoweredFunc func;
  func.name = KernelEntryName(*this);
  func.args = BufferArgsOf(workload);
  func.body = Block::Make(std::move(body));
  return func;
}

}  // namespace tunefleet

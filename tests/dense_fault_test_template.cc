#include "tests/dense_fault_test_template.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/workloads/dense.h"

namespace tunefleet {

constexpr Template::Names kNames = {
    "dense_fault.test", "dense",
    "TEST ONLY: dense with knob fault = none | segv (out-of-bounds store) | hang (near-endless "
    "loop)",
    /*is_gpu=*/false};
constexpr const char* kTemplateName = kNames.name;
namespace {

using namespace ir;  // NOLINT

// Registers the template in every binary that links this library.
const bool kRegistered = [] {
  RegisterTemplate(&DenseFaultTestTemplate());
  return true;
}();

}  // namespace

[[nodiscard]] static absl::StatusOr<ConfigSpace> DefineTemplateSpace(const Workload& workload) {
  TF_RETURN_IF_ERROR(DenseWorkload::From(workload, kTemplateName).status());
  ConfigSpace space;
  TF_RETURN_IF_ERROR(space.DefineKnob("fault", {"none", "segv", "hang"}));
  return space;
}

[[nodiscard]] static absl::StatusOr<LoweredFunc> InstantiateTemplate(const Workload& workload,
                                                                     const Config& config) {
  TF_ASSIGN_OR_RETURN(const DenseWorkload* dense, DenseWorkload::From(workload, kTemplateName));
  TF_ASSIGN_OR_RETURN(std::string fault, config.GetString("fault"));
  if (fault != "none" && fault != "segv" && fault != "hang") {
    return absl::InvalidArgumentError(
        absl::StrCat(kTemplateName, ": unknown fault \"", fault, "\""));
  }
  const int64_t M = dense->m(), N = dense->n(), K = dense->k();
  Expr y = Var::Make("y"), x = Var::Make("x"), k = Var::Make("k");
  Expr b_index = dense->layout() == DenseWorkload::Layout::kNK ? x * K + k : k * N + x;

  Stmt zero = For::Make("y", 0, M, ForKind::kSerial,
                        For::Make("x", 0, N, ForKind::kSerial, Store::Make("C", 0.0, y * N + x)));
  Stmt update = Store::Make(
      "C", Load::Make("C", y * N + x) + Load::Make("A", y * K + k) * Load::Make("B", b_index),
      y * N + x);
  Stmt accumulate = For::Make(
      "y", 0, M, ForKind::kSerial,
      For::Make("x", 0, N, ForKind::kSerial, For::Make("k", 0, K, ForKind::kSerial, update)));

  std::vector<Stmt> body;
  if (fault == "segv") body.push_back(Store::Make("C", 1.0, Expr(kDenseFaultIndex)));
  body.push_back(zero);
  if (fault == "hang") {
    // Each repeat accumulates into C again: a side effect that depends on
    // every iteration, so the loop can be neither deleted nor folded.
    body.push_back(For::Make("rep", 0, Expr(kDenseFaultHangRepeats), ForKind::kSerial, accumulate));
  } else {
    body.push_back(accumulate);
  }

  LoweredFunc func;
  func.name = KernelEntryName(DenseFaultTestTemplate());
  func.args = BufferArgsOf(workload);
  func.body = Block::Make(std::move(body));
  return func;
}

const Template& DenseFaultTestTemplate() {
  static const Template kTemplate(kNames, &DefineTemplateSpace, &InstantiateTemplate);
  return kTemplate;
}

}  // namespace tunefleet

#include "tuner_core/templates/dense_gpu_cuda.h"

#include "common/status_macros.h"
#include "tuner_core/templates/gemm_cuda.h"
#include "tuner_core/workloads/dense.h"

namespace tunefleet {

constexpr Template::Names kNames = {
    "dense_gpu.cuda", "dense",
    "CUDA dense: block tile in shared memory (double-buffered), per-thread register tile "
    "with 128-bit fragment loads, rasterised blocks",
    /*is_gpu=*/true};
constexpr const char* kTemplateName = kNames.name;

using namespace ir;  // NOLINT

// The dense product as a GPU GEMM: A (M x K) and B (N x K for layout NK,
// K x N for KN) contiguous along K unless B is KN; C is M x N.
static GpuGemmSpec DenseGemm(const DenseWorkload& dense) {
  const int64_t N = dense.n(), K = dense.k();
  const bool nk = dense.layout() == DenseWorkload::Layout::kNK;
  GpuGemmSpec spec{.m = dense.m(), .n = N, .k = K};
  spec.a.element = [K](Expr, Expr row, Expr k) { return Load::Make("A", row * K + k); };
  if (nk) {
    spec.b.element = [K](Expr, Expr col, Expr k) { return Load::Make("B", col * K + k); };
  } else {
    spec.b.element = [N](Expr, Expr col, Expr k) { return Load::Make("B", k * N + col); };
    spec.b.k_contiguous = false;
  }
  spec.store = [N](Expr, Expr row, Expr col, Expr value) {
    return Store::Make("C", value, row * N + col);
  };
  return spec;
}

[[nodiscard]] static absl::StatusOr<ConfigSpace> DefineTemplateSpace(const Workload& workload) {
  TF_ASSIGN_OR_RETURN(const DenseWorkload* dense, DenseWorkload::From(workload, kTemplateName));
  ConfigSpace space;
  TF_RETURN_IF_ERROR(DefineGpuGemmSpace(DenseGemm(*dense), space));
  return space;
}

[[nodiscard]] static absl::StatusOr<LoweredFunc> InstantiateTemplate(const Workload& workload,
                                                                     const Config& config) {
  TF_ASSIGN_OR_RETURN(const DenseWorkload* dense, DenseWorkload::From(workload, kTemplateName));
  TF_ASSIGN_OR_RETURN(Stmt nest, GpuGemmNest(DenseGemm(*dense), config, kTemplateName));
  return KernelFunc(DenseGpuCudaTemplate(), workload, nest);
}

const Template& DenseGpuCudaTemplate() {
  static const Template kTemplate(kNames, &DefineTemplateSpace, &InstantiateTemplate);
  return kTemplate;
}

}  // namespace tunefleet

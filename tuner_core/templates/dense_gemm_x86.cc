#include "tuner_core/templates/dense_gemm_x86.h"

#include <utility>

#include "common/status_macros.h"
#include "tuner_core/templates/gemm_pack.h"
#include "tuner_core/workloads/dense.h"

namespace tunefleet {

constexpr Template::Names kNames = {
    "dense_gemm.x86", "dense",
    "packed GEMM with B packed per call or once (weights), MRxNR tiles up to 32 vectors, "
    "and an unpacked dot kernel for small M (NK)",
    /*is_gpu=*/false};
constexpr const char* kTemplateName = kNames.name;

[[nodiscard]] static absl::StatusOr<ConfigSpace> DefineTemplateSpace(const Workload& workload) {
  TF_ASSIGN_OR_RETURN(const DenseWorkload* dense, DenseWorkload::From(workload, kTemplateName));
  ConfigSpace space;
  TF_RETURN_IF_ERROR(
      DefineDenseGemmSpace(dense->k(), dense->layout() == DenseWorkload::Layout::kNK, &space));
  return space;
}

[[nodiscard]] static absl::StatusOr<ir::LoweredFunc> InstantiateTemplate(const Workload& workload,
                                                                         const Config& config) {
  TF_ASSIGN_OR_RETURN(const DenseWorkload* dense, DenseWorkload::From(workload, kTemplateName));
  const GemmShape shape{1, dense->m(), dense->n(), dense->k(),
                        dense->layout() == DenseWorkload::Layout::kNK};
  TF_ASSIGN_OR_RETURN(PackedGemmKernel kernel, BuildDenseGemm(shape, config));
  ir::LoweredFunc func = KernelFunc(DenseGemmX86Template(), workload, std::move(kernel.body));
  func.staged = std::move(kernel.staged);
  func.prepare = std::move(kernel.prepare);
  return func;
}

const Template& DenseGemmX86Template() {
  static const Template kTemplate(kNames, &DefineTemplateSpace, &InstantiateTemplate,
                                  &GemmRegisterDemand);
  return kTemplate;
}

}  // namespace tunefleet

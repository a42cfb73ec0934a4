#include "tuner_core/templates/dense_pack_x86.h"

#include <utility>

#include "common/status_macros.h"
#include "tuner_core/templates/gemm_pack.h"
#include "tuner_core/workloads/dense.h"

namespace tunefleet {

constexpr Template::Names kNames = {
    "dense_pack.x86", "dense",
    "packed panels + MRxNR register tile with vector FMAs, KC blocking, parallel blocks",
    /*is_gpu=*/false};
constexpr const char* kTemplateName = kNames.name;

[[nodiscard]] static absl::StatusOr<ConfigSpace> DefineTemplateSpace(const Workload& workload) {
  TF_ASSIGN_OR_RETURN(const DenseWorkload* dense, DenseWorkload::From(workload, kTemplateName));
  ConfigSpace space;
  TF_RETURN_IF_ERROR(DefineGemmPackSpace(dense->k(), &space));
  return space;
}

[[nodiscard]] static absl::StatusOr<ir::LoweredFunc> InstantiateTemplate(const Workload& workload,
                                                                         const Config& config) {
  TF_ASSIGN_OR_RETURN(const DenseWorkload* dense, DenseWorkload::From(workload, kTemplateName));
  const GemmShape shape{1, dense->m(), dense->n(), dense->k(),
                        dense->layout() == DenseWorkload::Layout::kNK};
  TF_ASSIGN_OR_RETURN(ir::Stmt body, BuildPackedGemm(shape, config));
  return KernelFunc(DensePackX86Template(), workload, std::move(body));
}

const Template& DensePackX86Template() {
  static const Template kTemplate(kNames, &DefineTemplateSpace, &InstantiateTemplate,
                                  &GemmRegisterDemand);
  return kTemplate;
}

}  // namespace tunefleet

#include "tuner_core/templates/batch_matmul_pack_x86.h"

#include <utility>

#include "common/status_macros.h"
#include "tuner_core/templates/gemm_pack.h"
#include "tuner_core/workloads/batch_matmul.h"

namespace tunefleet {

constexpr Template::Names kNames = {
    "batch_matmul_pack.x86", "batch_matmul",
    "packed GEMM per batch item (MRxNR register tile, KC blocking), "
    "parallel over items and blocks",
    /*is_gpu=*/false};
constexpr const char* kTemplateName = kNames.name;

[[nodiscard]] static absl::StatusOr<ConfigSpace> DefineTemplateSpace(const Workload& workload) {
  TF_ASSIGN_OR_RETURN(const BatchMatmulWorkload* bmm,
                      BatchMatmulWorkload::From(workload, kTemplateName));
  ConfigSpace space;
  TF_RETURN_IF_ERROR(DefineGemmPackSpace(bmm->k(), &space));
  return space;
}

[[nodiscard]] static absl::StatusOr<ir::LoweredFunc> InstantiateTemplate(const Workload& workload,
                                                                         const Config& config) {
  TF_ASSIGN_OR_RETURN(const BatchMatmulWorkload* bmm,
                      BatchMatmulWorkload::From(workload, kTemplateName));
  const GemmShape shape{bmm->batch(), bmm->m(), bmm->n(), bmm->k(),
                        bmm->layout() == BatchMatmulWorkload::Layout::kNK};
  TF_ASSIGN_OR_RETURN(ir::Stmt body, BuildPackedGemm(shape, config));
  return KernelFunc(BatchMatmulPackX86Template(), workload, std::move(body));
}

const Template& BatchMatmulPackX86Template() {
  static const Template kTemplate(kNames, &DefineTemplateSpace, &InstantiateTemplate,
                                  &GemmRegisterDemand);
  return kTemplate;
}

}  // namespace tunefleet

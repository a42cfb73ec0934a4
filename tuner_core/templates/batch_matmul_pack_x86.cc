#include "tuner_core/templates/batch_matmul_pack_x86.h"

#include "common/status_macros.h"
#include "tuner_core/templates/gemm_pack.h"
#include "tuner_core/workloads/batch_matmul.h"

namespace tunefleet {

absl::StatusOr<ConfigSpace> BatchMatmulPackX86Template::DefineSpace(const Workload& workload) const {
  TF_ASSIGN_OR_RETURN(const BatchMatmulWorkload* bmm, BatchMatmulWorkload::From(workload, name_));
  ConfigSpace space;
  TF_RETURN_IF_ERROR(DefineGemmPackSpace(bmm->k(), &space));
  return space;
}

absl::StatusOr<ir::LoweredFunc> BatchMatmulPackX86Template::Instantiate(const Workload& workload,
                                                                        const Config& config) const {
  TF_ASSIGN_OR_RETURN(const BatchMatmulWorkload* bmm, BatchMatmulWorkload::From(workload, name_));
  const GemmShape shape{bmm->batch(), bmm->m(), bmm->n(), bmm->k(),
                        bmm->layout() == BatchMatmulWorkload::Layout::kNK};
  ir::LoweredFunc func;
  func.name = KernelEntryName(*this);
  func.args = BufferArgsOf(workload);
  TF_ASSIGN_OR_RETURN(func.body, BuildPackedGemm(shape, config));
  return func;
}

}  // namespace tunefleet

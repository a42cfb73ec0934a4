#include "tuner_core/templates/dense_pack_x86.h"

#include "common/status_macros.h"
#include "tuner_core/templates/gemm_pack.h"
#include "tuner_core/workloads/dense.h"

namespace tunefleet {

absl::StatusOr<ConfigSpace> DensePackX86Template::DefineSpace(const Workload& workload) const {
  TF_ASSIGN_OR_RETURN(const DenseWorkload* dense, DenseWorkload::From(workload, name_));
  ConfigSpace space;
  TF_RETURN_IF_ERROR(DefineGemmPackSpace(dense->k(), &space));
  return space;
}

absl::StatusOr<ir::LoweredFunc> DensePackX86Template::Instantiate(const Workload& workload,
                                                                  const Config& config) const {
  TF_ASSIGN_OR_RETURN(const DenseWorkload* dense, DenseWorkload::From(workload, name_));
  const GemmShape shape{1, dense->m(), dense->n(), dense->k(), dense->layout() == DenseWorkload::Layout::kNK};
  ir::LoweredFunc func;
  func.name = KernelEntryName(*this);
  func.args = BufferArgsOf(workload);
  TF_ASSIGN_OR_RETURN(func.body, BuildPackedGemm(shape, config));
  return func;
}

}  // namespace tunefleet

// The CPU batch_matmul template: the packed GEMM of gemm_pack.h applied to
// every batch item, with the parallel loops running over (batch item,
// block), so small attention-sized products (e.g. 12 heads of 128x64x128)
// still fill every core. Knobs as in gemm_pack.h.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_BATCH_MATMUL_PACK_X86_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_BATCH_MATMUL_PACK_X86_H_

#include "tuner_core/templates/template.h"

namespace tunefleet {

class BatchMatmulPackX86Template final : public Template {
 public:
  const std::string& name() const override { return name_; }
  const std::string& workload_name() const override { return workload_; }
  const std::string& description() const override { return description_; }
  absl::StatusOr<ConfigSpace> DefineSpace(const Workload& workload) const override;
  absl::StatusOr<ir::LoweredFunc> Instantiate(const Workload& workload,
                                              const Config& config) const override;

 private:
  std::string name_ = "batch_matmul_pack.x86";
  std::string workload_ = "batch_matmul";
  std::string description_ =
      "packed GEMM per batch item (MRxNR register tile, KC blocking), parallel over items and blocks";
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_BATCH_MATMUL_PACK_X86_H_

// The fast CPU dense template: the packed GEMM of gemm_pack.h (BLIS-style
// panels, an MR x NR register tile of vector FMAs, KC blocking, parallel
// blocks) for one matrix product; its knobs are listed there.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_PACK_X86_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_PACK_X86_H_

#include "tuner_core/templates/template.h"

namespace tunefleet {

class DensePackX86Template final : public Template {
 public:
  const std::string& name() const override { return name_; }
  const std::string& workload_name() const override { return workload_; }
  const std::string& description() const override { return description_; }
  absl::StatusOr<ConfigSpace> DefineSpace(const Workload& workload) const override;
  absl::StatusOr<ir::LoweredFunc> Instantiate(const Workload& workload,
                                              const Config& config) const override;

 private:
  std::string name_ = "dense_pack.x86";
  std::string workload_ = "dense";
  std::string description_ =
      "packed panels + MRxNR register tile with vector FMAs, KC blocking, parallel blocks";
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_PACK_X86_H_

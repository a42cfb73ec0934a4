// The simple tiled dense template of AutoTVM's matmul tutorial: split the
// rows (tile_y) and columns (tile_x) of C, order the loops
// (yo, xo, k, yi, xi). Serial and scalar: a baseline, ~20 GFLOPS at best.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_TILED_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_TILED_H_

#include "tuner_core/templates/template.h"

namespace tunefleet {

class DenseTiledTemplate final : public Template {
 public:
  const std::string& name() const override { return name_; }
  const std::string& workload_name() const override { return workload_; }
  const std::string& description() const override { return description_; }
  absl::StatusOr<ConfigSpace> DefineSpace(const Workload& workload) const override;
  absl::StatusOr<ir::LoweredFunc> Instantiate(const Workload& workload,
                                              const Config& config) const override;

 private:
  std::string name_ = "dense_tiled";
  std::string workload_ = "dense";
  std::string description_ = "AutoTVM tutorial matmul: tile_y x tile_x splits, loops (yo, xo, k, yi, xi)";
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_TILED_H_

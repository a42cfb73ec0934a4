// The CUDA conv2d template, in the spirit of AutoTVM's conv2d_nchw direct
// CUDA schedule: straight from the NCHW tensors (no layout transform, so the
// workload's NCHW/NCHWc choice changes nothing here). A thread block computes
// a BF x BY x BX tile of one image's output (filters x rows x columns), each
// thread an fi x yi x xi register tile whose elements are tf / ty / tx apart
// (so neighbouring threads write neighbouring columns). The input channels
// advance in steps of rci; each step stages the input window the tile needs
// (zero padding applied while loading) and the matching weights in shared
// memory, loaded cooperatively by the block.
//
// Knobs:
//   tile_f   [blocks, tf, fi]: output channels over blockIdx.z (with the
//            batch), threadIdx.z, registers
//   tile_y   [blocks, ty, yi]: output rows over blockIdx.y, threadIdx.y, registers
//   tile_x   [blocks, tx, xi]: output columns over blockIdx.x, threadIdx.x, registers
//   tile_rc  [steps, rci]: input channels staged per step
//   unroll_rs  0/1: unroll the kernel-window loops
// Limits (threads, shared memory, registers) are checked at build time.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_CONV2D_DIRECT_CUDA_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_CONV2D_DIRECT_CUDA_H_

#include "tuner_core/templates/template.h"

namespace tunefleet {

class Conv2dDirectCudaTemplate final : public Template {
 public:
  const std::string& name() const override { return name_; }
  const std::string& workload_name() const override { return workload_; }
  const std::string& description() const override { return description_; }
  bool is_gpu() const override { return true; }
  absl::StatusOr<ConfigSpace> DefineSpace(const Workload& workload) const override;
  absl::StatusOr<ir::LoweredFunc> Instantiate(const Workload& workload,
                                              const Config& config) const override;

 private:
  std::string name_ = "conv2d_direct.cuda";
  std::string workload_ = "conv2d_nchw";
  std::string description_ =
      "CUDA direct conv2d: filters x rows x columns block tile, input window and weights staged "
      "in shared memory per input-channel step";
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_CONV2D_DIRECT_CUDA_H_

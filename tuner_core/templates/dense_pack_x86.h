// The fast CPU dense template, built the way BLIS builds a GEMM (Goto & van
// de Geijn): B packed into NR-wide panels (and optionally A into MR-tall
// panels), an MR x NR register tile of C accumulated over a KC block of the
// shared dimension with vector FMAs, loops over panels inside MC x NC blocks
// for cache reuse, and a parallel loop over the blocks.
//
// Knobs (all chosen by the search space, none hard-coded):
//   vec       vector lanes (4 SSE/NEON, 8 AVX2, 16 AVX-512; wider than the
//             target is an INSTANTIATION_ERROR at build time)
//   nr_vecs   vectors per tile row, NR = vec * nr_vecs
//   mr        rows of the register tile
//   kc        shared-dimension block
//   mc_panels MR-panels per M block,  nc_panels NR-panels per N block
//   unroll_k  unrolling of the innermost k loop
//   pack_a    pack A into panels (1) or read it in place (0)
//   order     panel loop order inside a block ("nm": B panel outer, A inner)
//   fuse      order of the fused parallel block loop ("mn" or "nm")
// Sizes that do not divide the tiles are handled by zero-padded panels and
// guarded edge tiles.
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

// The CPU batch_matmul template: the packed GEMM of gemm_pack.h applied to
// every batch item, with the parallel loops running over (batch item,
// block), so small attention-sized products (e.g. 12 heads of 128x64x128)
// still fill every core. Knobs as in gemm_pack.h.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_BATCH_MATMUL_PACK_X86_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_BATCH_MATMUL_PACK_X86_H_

#include "tuner_core/templates/template.h"

namespace tunefleet {

const Template& BatchMatmulPackX86Template();

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_BATCH_MATMUL_PACK_X86_H_

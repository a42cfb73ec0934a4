// The fast CPU dense template: the packed GEMM of gemm_pack.h (BLIS-style
// panels, an MR x NR register tile of vector FMAs, KC blocking, parallel
// blocks) for one matrix product; its knobs are listed there.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_PACK_X86_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_PACK_X86_H_

#include "tuner_core/templates/template.h"

namespace tunefleet {

const Template& DensePackX86Template();

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_PACK_X86_H_

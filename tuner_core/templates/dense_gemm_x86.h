// The dense template with the widest CPU space ("dense_gemm.x86"): the packed
// GEMM of gemm_pack.h with the dense knobs (DefineDenseGemmSpace): B, a
// layer's weights, packed on every call or once as the compiled model packs
// its constants, register tiles up to AVX-512's 32 vectors, and for the NK
// layout a "dot" kernel that packs nothing (small M, matrix-vector).
// dense_pack.x86 keeps its space (and every record made with it) unchanged.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_GEMM_X86_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_GEMM_X86_H_

#include "tuner_core/templates/template.h"

namespace tunefleet {

const Template& DenseGemmX86Template();

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_GEMM_X86_H_

// The CUDA dense template (C = A·Bᵀ for layout NK, A·B for KN): the shared
// block-tiled GEMM of gemm_cuda.h (block tile in shared memory, A transposed
// there, per-thread register tile read with 128-bit fragment loads, double
// buffering through registers, block rasterisation), with A contiguous
// along K and B along K (NK) or N (KN).
//
// Shapes that a split does not divide are not in the space (splits are
// "factors"); limits (threads, shared memory, registers) are checked when the
// kernel is built (toolchain/gpu_kernel_info.h).
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_GPU_CUDA_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_GPU_CUDA_H_

#include "tuner_core/templates/template.h"

namespace tunefleet {

const Template& DenseGpuCudaTemplate();

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_GPU_CUDA_H_

// The CUDA dense template (C = A·Bᵀ for layout NK, A·B for KN), in the
// spirit of AutoTVM's dense_large_batch.cuda: a thread block computes a
// BM x BN tile of C with BM = ty·tm, BN = tx·tn; each thread keeps a tm x tn
// register tile; K advances in steps of bk, each step staging the A and B
// panels in shared memory, loaded cooperatively by the whole block.
//
// Knobs:
//   tile_m    [blocks, ty, tm]: M over blockIdx.y, threadIdx.y, registers
//   tile_n    [blocks, tx, tn]: N over blockIdx.x, threadIdx.x, registers
//   tile_k    [steps, bk]: the K step staged in shared memory
//   interleave  0: a thread's tm rows (tn columns) are adjacent;
//               1: they are ty (tx) apart, so neighbouring threads touch
//                  neighbouring shared-memory words and C elements
//   vec_load  1, 2, 4: width of the global loads that fill shared memory
//             (ld.global.v4.f32 when the addresses are provably aligned)
//   unroll_k  0/1: unroll the bk loop of multiply-adds
// Shapes that a split does not divide are not in the space (splits are
// "factors"); limits (threads, shared memory, registers) are checked when the
// kernel is built (builder_worker/gpu_kernel_info.h).
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_GPU_CUDA_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_GPU_CUDA_H_

#include "tuner_core/templates/template.h"

namespace tunefleet {

const Template& DenseGpuCudaTemplate();

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_DENSE_GPU_CUDA_H_

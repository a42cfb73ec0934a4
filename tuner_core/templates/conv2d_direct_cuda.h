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

const Template& Conv2dDirectCudaTemplate();

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_CONV2D_DIRECT_CUDA_H_

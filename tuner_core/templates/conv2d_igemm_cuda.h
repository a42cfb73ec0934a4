// The CUDA implicit-GEMM convolution (NCHW, ungrouped): per image, the
// output's K filters x (out_h * out_w) pixels are a GEMM over C·R·S whose A
// is the weight tensor as it lies (K x C·R·S, contiguous along C·R·S) and
// whose B is the input's im2col matrix, never materialised: each element of
// a B panel is read from the input window (zero outside it) as the panel is
// staged in shared memory. The block tiles, fragments, double buffering and
// rasterisation are the shared GPU GEMM's (gemm_cuda.h); images run on
// blockIdx.z.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_CONV2D_IGEMM_CUDA_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_CONV2D_IGEMM_CUDA_H_

#include "tuner_core/templates/template.h"

namespace tunefleet {

const Template& Conv2dIgemmCudaTemplate();

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_CONV2D_IGEMM_CUDA_H_

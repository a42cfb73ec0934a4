// Runs a loop nest on the CPU with CUDA's semantics, so GPU templates can be
// checked for correctness where there is no GPU: blocks one after another,
// the threads of a block each on their own OS thread, Barrier a real barrier
// among them, kShared buffers one per block, kStack buffers one per thread.
// It interprets the template's IR as instantiated (before VectorizeLoops and
// UnrollLoops: vectorized and unrolled loops run as serial loops), scalars
// only, and checks every buffer access against the buffer's bounds.
//
//   std::vector<float*> tensors = ...;  // the workload's tensors, in order
//   absl::Status s = EmulateGpuKernel(func, tensors);
//
// Meant for tests: slow (one OS thread per GPU thread), and only for
// kernels of modest size.
#ifndef TUNEFLEET_TUNER_CORE_IR_GPU_EMULATOR_H_
#define TUNEFLEET_TUNER_CORE_IR_GPU_EMULATOR_H_

#include <vector>

#include "absl/status/status.h"
#include "tuner_core/ir/ir.h"

namespace tunefleet::ir {

// `tensors[i]` holds func.args[i] (NumElements() floats). Errors: an access
// out of a buffer's bounds, an unbound name, a vector expression, a Barrier
// outside thread-bound loops, all naming the buffer or variable.
[[nodiscard]] absl::Status EmulateGpuKernel(const LoweredFunc& func,
                                            const std::vector<float*>& tensors);

}  // namespace tunefleet::ir

#endif  // TUNEFLEET_TUNER_CORE_IR_GPU_EMULATOR_H_

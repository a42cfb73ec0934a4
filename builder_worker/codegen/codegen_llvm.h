// CodeGenLLVM lowers one LoweredFunc (after VectorizeLoops and UnrollLoops)
// to an LLVM module holding the kernel entry point of common/kernel_abi.h:
//
//   i32 @<name>(ptr %args, ptr %runtime)
//
// Serial loops become blocks with a phi; parallel loops are outlined into
// `void @<name>.par.N(i64 %i, ptr %closure)` and handed to
// runtime->parallel_for; global allocations come from
// runtime->alloc_workspace, stack allocations are entry-block allocas (so
// LLVM promotes small register tiles to registers). Each buffer gets its own
// TBAA type, telling LLVM that distinct buffers never alias.
//
// For a CUDA target (TargetSpec::is_cuda) the module instead holds one NVPTX
// kernel, `void @<name>(ptr %tensor0, ...)` (common/gpu_artifact.h): loops
// bound to blockIdx/threadIdx read the special registers, kShared buffers are
// addrspace(3) globals, Barrier is bar.sync 0, index arithmetic is 32-bit;
// parallel loops, heap workspaces and staged kernels are rejected. `launch`
// (from AnalyzeGpuKernel) gives the block size for .maxntid.
//
// Per-target differences (CPU, features, vector width) come in through
// TargetSpec; a vector wider than TargetSpec::max_vector_bits is rejected here,
// as InvalidArgument, so the builder can report INSTANTIATION_ERROR.
#ifndef TUNEFLEET_BUILDER_WORKER_CODEGEN_CODEGEN_LLVM_H_
#define TUNEFLEET_BUILDER_WORKER_CODEGEN_CODEGEN_LLVM_H_

#include <memory>

#include "absl/status/statusor.h"
#include "builder_worker/codegen/target.h"
#include "common/gpu_artifact.h"
#include "tuner_core/ir/ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tunefleet {

// `func.body` must already be vectorized and unrolled (see lower.h).
absl::StatusOr<std::unique_ptr<llvm::Module>> CodegenLLVM(const ir::LoweredFunc& func,
                                                          const TargetSpec& target,
                                                          llvm::LLVMContext& context,
                                                          const GpuLaunch* launch = nullptr);

}  // namespace tunefleet

#endif  // TUNEFLEET_BUILDER_WORKER_CODEGEN_CODEGEN_LLVM_H_

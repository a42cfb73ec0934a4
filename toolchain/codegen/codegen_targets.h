// The code generator for each target family, behind one factory (Halide's
// CodeGen_Targets.h): the shared IR -> LLVM IR core is CodeGenLLVM
// (codegen_llvm.h); codegen_cpu.cc adds the CPU kernel ABI (x86-64,
// AArch64: entry point, parallel-for callback, workspaces, staged kernels),
// codegen_nvptx.cc the CUDA kernel (annotations, .maxntid, block/thread
// indices, shared memory, barriers).
//
// Builders call CodegenLLVM(); the New* factories are for tests and tools
// that want a backend by name.
#ifndef TUNEFLEET_TOOLCHAIN_CODEGEN_CODEGEN_TARGETS_H_
#define TUNEFLEET_TOOLCHAIN_CODEGEN_CODEGEN_TARGETS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "common/gpu_artifact.h"
#include "toolchain/codegen/codegen_llvm.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/ir/ir.h"

namespace tunefleet {

// `target` and `context` must outlive the returned code generator.
std::unique_ptr<CodeGenLLVM> NewCodeGenCPU(const TargetSpec& target, llvm::LLVMContext& context);
// `launch` (from AnalyzeGpuKernel) gives the block size for .maxntid.
std::unique_ptr<CodeGenLLVM> NewCodeGenNVPTX(const TargetSpec& target, const GpuLaunch* launch,
                                             llvm::LLVMContext& context);
// NVPTX for CUDA targets (TargetSpec::is_cuda), the CPU backend otherwise.
std::unique_ptr<CodeGenLLVM> NewCodeGenForTarget(const TargetSpec& target, const GpuLaunch* launch,
                                                 llvm::LLVMContext& context);

// Lowers one LoweredFunc to a verified LLVM module for `target`: for a CPU,
// the entry point of common/kernel_abi.h, `i32 @<name>(ptr %args, ptr
// %runtime)`; for CUDA, one NVPTX kernel `void @<name>(ptr %tensor0, ...)`
// whose block size `launch` gives. `func.body` must already be vectorized
// and unrolled (see lower.h). InvalidArgument for IR the target cannot run
// (e.g. a parallel loop on CUDA, a vector wider than the target takes).
[[nodiscard]] absl::StatusOr<std::unique_ptr<llvm::Module>> CodegenLLVM(
    const ir::LoweredFunc& func, const TargetSpec& target, llvm::LLVMContext& context,
    const GpuLaunch* launch = nullptr);

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLCHAIN_CODEGEN_CODEGEN_TARGETS_H_

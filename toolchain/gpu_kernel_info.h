// What a GPU loop nest needs to launch, read off its GPU-bound loops, and the
// device limits it must respect: checked at build time so a config that could
// never launch fails as INSTANTIATION_ERROR instead of reaching an agent.
//
//   TF_ASSIGN_OR_RETURN(GpuKernelInfo info, AnalyzeGpuKernel(lowered, target));
//   info.launch.grid / info.launch.block -> the artifact header
//
// The checks: every GPU-bound loop has min 0 and a constant extent, the same
// extent wherever its kind appears; block-bound loops are not nested inside
// thread-bound ones; threads per block <= max_threads_per_block; shared
// memory (kShared allocations, summed) <= max_shared_memory_per_block;
// estimated registers per thread (the per-thread register tiles, i.e. stack
// allocations, plus a fixed allowance for addresses and loop state) within
// max_registers_per_thread and, times the threads per block, within
// registers_per_block; no heap (kGlobal) workspace; every buffer indexable
// with 32-bit offsets (the CUDA code generator indexes with i32).
#ifndef TUNEFLEET_TOOLCHAIN_GPU_KERNEL_INFO_H_
#define TUNEFLEET_TOOLCHAIN_GPU_KERNEL_INFO_H_

#include "absl/status/statusor.h"
#include "common/gpu_artifact.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/ir/ir.h"

namespace tunefleet {

// Registers a thread needs beyond its register tiles: pointers, indices,
// loop counters, staging values. ptxas reports 20-40 for kernels like ours.
inline constexpr int kGpuBaseRegisters = 32;

struct GpuKernelInfo {
  GpuLaunch launch;  // entry = the function's name
  int64_t shared_bytes = 0;
  int estimated_registers = 0;  // per thread
};

// InvalidArgument naming the violated limit or malformed loop.
[[nodiscard]] absl::StatusOr<GpuKernelInfo> AnalyzeGpuKernel(const ir::LoweredFunc& func,
                                                             const TargetSpec& target);

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLCHAIN_GPU_KERNEL_INFO_H_

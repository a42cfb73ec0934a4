// Resolves a target string into what the LLVM backends need. The grammar is
// the fleet's one (target/target_string.h: llvm/cuda, -mtriple, -mcpu,
// -mattr, the CUDA limits, TVM's -keys/-device/-num-cores); this adds what
// needs LLVM:
//
//   "llvm"                                   host triple, generic CPU
//   "llvm -mcpu=native"                      host triple, host CPU and features
//   "llvm -mtriple=x86_64-linux-gnu -mcpu=znver3 -mattr=+avx2,+fma"
//   "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72"
//   "cuda -mcpu=sm_90"                       NVIDIA GPU through NVPTX (PTX for sm_90)
//   "cuda -arch=sm_80 -max_threads_per_block=1024 -max_shared_memory_per_block=49152
//         -registers_per_block=65536"        ... with the device's limits (TVM's names)
//
// A string the grammar refuses, a triple, CPU or GPU architecture LLVM does
// not know, or -mcpu=native for another architecture is InvalidArgument
// naming the offending part. What each architecture is (vector registers,
// families, features) is its target/ folder's Arch; this adds what needs LLVM.
#ifndef TUNEFLEET_TOOLCHAIN_CODEGEN_TARGET_H_
#define TUNEFLEET_TOOLCHAIN_CODEGEN_TARGET_H_

#include <string>

#include "absl/status/statusor.h"
#include "target/target_spec.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<TargetSpec> ParseTarget(const std::string& target);

// "llvm -mcpu=<host cpu>": what `tune` uses when no --target is given.
std::string HostTargetString();

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLCHAIN_CODEGEN_TARGET_H_

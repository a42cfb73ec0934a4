// Resolves a target string into what the LLVM backends need. The grammar is
// the fleet's one (common/target_string.h: llvm/cuda, -mtriple, -mcpu,
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
// naming the offending part.
#ifndef TUNEFLEET_TOOLCHAIN_CODEGEN_TARGET_H_
#define TUNEFLEET_TOOLCHAIN_CODEGEN_TARGET_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace tunefleet {

struct TargetSpec {
  std::string original;  // the string it was parsed from
  std::string triple;    // normalised, e.g. "x86_64-unknown-linux-gnu"
  std::string cpu;       // resolved: "native" becomes the host CPU name
  std::string features;  // LLVM feature string, e.g. "+avx2,+fma"
  // Widest native vector register in bits (128 SSE/NEON, 256 AVX, 512 AVX-512;
  // 128 for CUDA: ld.v4.f32).
  int vector_bits = 128;
  // Widest fp32 vector the code generator accepts in a kernel. x86: the
  // native width (AVX2 has only 16 registers). AArch64: 4 x 128 bits, since
  // its 32 NEON registers hold 8- and 16-lane vectors as 2 or 4 registers
  // (LLVM splits them), as TVM's ARM schedules rely on. CUDA: 128 (v4.f32).
  int max_vector_bits = 128;
  // Architectural vector registers of vector_bits each: 32 with AVX-512F
  // (zmm0-31), 16 with AVX/AVX2 (ymm) or SSE only (xmm) on x86-64, 32 on
  // AArch64 (NEON v0-v31). 0 where not counted (CUDA: the GPU's limits
  // above apply instead).
  int vector_registers = 0;

  // CUDA targets: the limits a config must respect to launch, checked at
  // build time (defaults: what every GPU since sm_70 offers).
  int max_threads_per_block = 1024;
  int64_t max_shared_memory_per_block = 48 * 1024;  // static shared memory
  int64_t registers_per_block = 64 * 1024;
  int max_registers_per_thread = 255;

  bool is_x86() const;
  bool is_aarch64() const;
  bool is_cuda() const;    // nvptx64-nvidia-cuda: the artifact is PTX
  int sm_version() const;  // 90 for sm_90; 0 for non-CUDA targets
  // The family whose tuned configs carry over (tuner_core/pretuned): the
  // architecture and its vector width, "x86_64-avx512", "x86_64-avx2",
  // "x86_64-sse", "aarch64-neon", "cuda-sm_90"; the triple's architecture
  // for others.
  std::string family() const;
};

[[nodiscard]] absl::StatusOr<TargetSpec> ParseTarget(const std::string& target);

// "llvm -mcpu=<host cpu>": what `tune` uses when no --target is given.
std::string HostTargetString();

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLCHAIN_CODEGEN_TARGET_H_

// A resolved target: the string parsed (target_string.h), the CPU and
// features resolved (by the toolchain, which asks LLVM: ParseTarget in
// toolchain/codegen/target.h), and its architecture's description.
#ifndef TUNEFLEET_TARGET_TARGET_SPEC_H_
#define TUNEFLEET_TARGET_TARGET_SPEC_H_

#include <cstdint>
#include <string>

#include "target/arch.h"

namespace tunefleet {

struct TargetSpec {
  std::string original;  // the string it was parsed from
  std::string triple;    // normalised, e.g. "x86_64-unknown-linux-gnu"
  std::string cpu;       // resolved: "native" becomes the host CPU name
  std::string features;  // LLVM feature string, e.g. "+avx2,+fma"
  // The triple's architecture (never null in a spec ParseTarget returns).
  const Arch* arch = nullptr;
  // The vector registers (Arch::Vectors for these features): widest native
  // register, widest fp32 vector a kernel may use, architectural count.
  int vector_bits = 128;
  int max_vector_bits = 128;
  int vector_registers = 0;

  // GPU targets: the limits a config must respect to launch, checked at
  // build time (defaults: what every GPU since sm_70 offers).
  int max_threads_per_block = 1024;
  int64_t max_shared_memory_per_block = 48 * 1024;  // static shared memory
  int64_t registers_per_block = 64 * 1024;
  int max_registers_per_thread = 255;

  VectorShape vectors() const { return {vector_bits, max_vector_bits, vector_registers}; }
  bool is_cuda() const { return arch != nullptr && arch->is_gpu(); }  // the artifact is PTX
  int sm_version() const;  // 90 for sm_90; 0 for non-CUDA targets
  // The family whose tuned configs carry over (Arch::Family):
  // "x86_64-avx512", "x86_64-avx2", "aarch64-neon", "cuda-sm_90".
  std::string family() const;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TARGET_TARGET_SPEC_H_

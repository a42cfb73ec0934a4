// The one grammar of TuneFleet's target strings, read without LLVM so that
// every process accepts and refuses the same strings: the tracker when a job
// is submitted, the builder before it compiles, the tuner and local `tune`.
// Use ParseTargetString wherever a target string enters the system; the
// builder (toolchain/codegen/target.h) adds only what needs LLVM on top
// (the host triple, -mcpu=native, whether LLVM knows the CPU).
//
//   "llvm"                                            host triple, generic CPU
//   "llvm -mcpu=native"                               host triple and CPU
//   "llvm -mtriple=x86_64-linux-gnu -mcpu=znver3 -mattr=+avx2,+fma"
//   "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -keys=arm_cpu,cpu -num-cores=4"
//   "llvm -mtriple=nvptx64-nvidia-cuda -mcpu=sm_80"   the same as "cuda -mcpu=sm_80"
//   "cuda -mcpu=sm_90"                                NVIDIA GPU (PTX for sm_90)
//   "cuda -arch=sm_80 -max_threads_per_block=1024 -max_shared_memory_per_block=49152
//         -registers_per_block=65536 -thread_warp_size=32"
//
// Every option is `-name=value`. Accepted (TVM's names):
//   llvm:  -mtriple (x86_64-*, aarch64-* or nvptx64-*), -mcpu, -mattr (+f,-g)
//   cuda:  -mcpu or -arch (sm_NN), -max_threads_per_block,
//          -max_shared_memory_per_block, -registers_per_block,
//          -thread_warp_size (positive integers)
//   both:  -keys (comma list), -device (a name), -num-cores (positive integer);
//          TVM attributes that describe the device and change no code here.
// An unknown option, an option given twice, a missing or malformed value is
// InvalidArgument naming the option (and, for an unknown one, listing those
// accepted).
#ifndef TUNEFLEET_TARGET_TARGET_STRING_H_
#define TUNEFLEET_TARGET_TARGET_STRING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {

enum class TargetKind { kLlvm, kCuda };

struct TargetString {
  std::string original;  // the string it was parsed from
  // kCuda for "cuda ..." and for "llvm -mtriple=nvptx64-...".
  TargetKind kind = TargetKind::kLlvm;
  // -mtriple as written; empty means the host's. "nvptx64-nvidia-cuda" for
  // "cuda ..." strings.
  std::string triple;
  // -mcpu as written ("native", "znver3"; "" when not given); for CUDA the
  // architecture from -mcpu or -arch ("sm_90").
  std::string mcpu;
  std::vector<std::string> mattrs;  // "+avx2", "-fma", in the given order
  int sm = 0;                       // CUDA: 90 for sm_90; 0 otherwise

  // TVM's descriptive attributes; empty / 0 when not given.
  std::vector<std::string> keys;
  std::string device;
  int64_t num_cores = 0;

  // CUDA device limits; 0 when the string does not give them.
  int64_t max_threads_per_block = 0;
  int64_t max_shared_memory_per_block = 0;
  int64_t registers_per_block = 0;
  int64_t thread_warp_size = 0;

  bool is_cuda() const { return kind == TargetKind::kCuda; }
};

// The parsed string, or InvalidArgument saying what is wrong (see above).
[[nodiscard]] absl::StatusOr<TargetString> ParseTargetString(absl::string_view target);

// `target` with "-mcpu=native" replaced by "-mcpu=<cpu>" (the measuring
// device's CPU, which is what "native" means for a fleet); unchanged when it
// has no such option or `cpu` is empty.
std::string WithNativeCpu(absl::string_view target, const std::string& cpu);

// Whether `target` names a CUDA GPU ("cuda ..." or "llvm -mtriple=nvptx64-..."),
// without checking the rest: for choosing a default template.
bool IsCudaTargetString(absl::string_view target);

}  // namespace tunefleet

#endif  // TUNEFLEET_TARGET_TARGET_STRING_H_

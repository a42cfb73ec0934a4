// Parses TVM-style target strings into what the LLVM backends need:
//
//   "llvm"                                   host triple, generic CPU
//   "llvm -mcpu=native"                      host triple, host CPU and features
//   "llvm -mtriple=x86_64-linux-gnu -mcpu=znver3 -mattr=+avx2,+fma"
//   "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72"
//
// Unknown flags, an unknown triple or CPU, or a malformed -mattr are
// InvalidArgument naming the offending part.
#ifndef TUNEFLEET_BUILDER_WORKER_CODEGEN_TARGET_H_
#define TUNEFLEET_BUILDER_WORKER_CODEGEN_TARGET_H_

#include <string>

#include "absl/status/statusor.h"

namespace tunefleet {

struct TargetSpec {
  std::string original;   // the string it was parsed from
  std::string triple;     // normalised, e.g. "x86_64-unknown-linux-gnu"
  std::string cpu;        // resolved: "native" becomes the host CPU name
  std::string features;   // LLVM feature string, e.g. "+avx2,+fma"
  // Widest native vector register in bits (128 SSE/NEON, 256 AVX, 512 AVX-512).
  int vector_bits = 128;

  bool is_x86() const;
  bool is_aarch64() const;
};

absl::StatusOr<TargetSpec> ParseTarget(const std::string& target);

// "llvm -mcpu=<host cpu>": what `tune` uses when no --target is given.
std::string HostTargetString();

}  // namespace tunefleet

#endif  // TUNEFLEET_BUILDER_WORKER_CODEGEN_TARGET_H_

// The flags of a CUDA target string, read without LLVM so the tracker (which
// validates jobs) and the builder (which compiles them) accept exactly the
// same strings:
//
//   "cuda -mcpu=sm_90"
//   "cuda -arch=sm_80 -max_threads_per_block=1024 -max_shared_memory_per_block=49152
//         -registers_per_block=65536"     (TVM's names; -keys= and -thread_warp_size= ignored)
//
// The builder then checks the architecture against LLVM's NVPTX backend.
#ifndef TUNEFLEET_COMMON_CUDA_TARGET_H_
#define TUNEFLEET_COMMON_CUDA_TARGET_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace tunefleet {

struct CudaTargetFlags {
  std::string arch;  // "sm_90"
  int sm = 0;        // 90
  // 0 where the string does not give the limit.
  int64_t max_threads_per_block = 0;
  int64_t max_shared_memory_per_block = 0;
  int64_t registers_per_block = 0;
};

// Whether the string's first word is "cuda".
bool IsCudaTarget(const std::string& target);

// InvalidArgument naming the offending flag: not a cuda target, an unknown
// flag, an architecture that is not sm_NN, a limit that is not a positive
// integer, or no -mcpu/-arch at all.
absl::StatusOr<CudaTargetFlags> ParseCudaTargetFlags(const std::string& target);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_CUDA_TARGET_H_

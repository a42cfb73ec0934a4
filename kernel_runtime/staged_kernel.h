// A loaded kernel with the optional stages of common/kernel_abi.h: finds the
// entry and, when the object exports them, its staged-buffer table and its
// prepare/finish functions, and owns the staged buffers that every call gets
// after the tensor arguments.
//
//   TF_ASSIGN_OR_RETURN(StagedKernel kernel,
//                       StagedKernel::Find(shared_object, entry, tensor_args));
//   kernel.Prepare(runtime);            // untimed: inputs -> staged buffers
//   kernel.Run(runtime);                // timed, as often as needed
//   kernel.Finish(runtime);             // untimed: staged buffers -> outputs
//
// A kernel without stages behaves exactly as its entry alone.
#ifndef TUNEFLEET_KERNEL_RUNTIME_STAGED_KERNEL_H_
#define TUNEFLEET_KERNEL_RUNTIME_STAGED_KERNEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/kernel_abi.h"
#include "kernel_runtime/kernel_loader.h"
#include "kernel_runtime/tensor_data.h"
#include "kernel_runtime/time_evaluator.h"

namespace tunefleet {

class StagedKernel {
 public:
  // Largest total of staged buffers one kernel may ask for: a table beyond
  // it is taken for garbage rather than allocated.
  static constexpr int64_t kMaxStagedBytes = int64_t{4} << 30;

  // `tensor_args` are the workload's buffers in kernel order; the object
  // must outlive the result. NotFound when the entry is missing,
  // InvalidArgument for a malformed staged table, ResourceExhausted when the
  // staged buffers cannot be allocated.
  [[nodiscard]] static absl::StatusOr<StagedKernel> Find(const SharedObject& object,
                                                         const std::string& entry_name,
                                                         absl::Span<void* const> tensor_args);

  // Each returns the stage's status (0 = success); Prepare and Finish
  // return 0 when the kernel has no such stage.
  int32_t Prepare(const TfRuntime* runtime) {
    return prepare_ ? prepare_(args_.data(), runtime) : 0;
  }
  int32_t Run(const TfRuntime* runtime) { return entry_(args_.data(), runtime); }
  int32_t Finish(const TfRuntime* runtime) { return finish_ ? finish_(args_.data(), runtime) : 0; }

  bool has_stages() const { return !staged_.empty(); }
  // The staged buffers, for the cache flush before a timed repeat (the timed
  // entry reads them as it would read its inputs).
  std::vector<CacheFlushRange> StagedRanges() const;

 private:
  StagedKernel() = default;

  TfKernelEntry entry_ = nullptr;
  TfKernelEntry prepare_ = nullptr;
  TfKernelEntry finish_ = nullptr;
  std::vector<AlignedFloats> staged_;
  std::vector<int64_t> staged_elements_;
  std::vector<void*> args_;  // tensors, then staged buffers
};

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_STAGED_KERNEL_H_

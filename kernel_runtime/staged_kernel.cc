#include "kernel_runtime/staged_kernel.h"

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

// At most this many staged buffers: a longer table is not a real kernel's.
constexpr int kMaxStagedBuffers = 64;

}  // namespace

absl::StatusOr<StagedKernel> StagedKernel::Find(const SharedObject& object,
                                                const std::string& entry_name,
                                                absl::Span<void* const> tensor_args) {
  StagedKernel kernel;
  absl::StatusOr<TfKernelEntry> entry = object.FindKernelEntry(entry_name);
  if (!entry.ok()) return entry.status();
  kernel.entry_ = *entry;
  kernel.args_.assign(tensor_args.begin(), tensor_args.end());

  absl::StatusOr<void*> table = object.FindSymbol(entry_name + TF_KERNEL_STAGED_ELEMENTS_SUFFIX);
  if (!table.ok()) return kernel;  // a self-contained kernel
  const auto* elements = static_cast<const int64_t*>(*table);
  int64_t total_bytes = 0;
  for (int i = 0;; ++i) {
    if (i == kMaxStagedBuffers) {
      return absl::InvalidArgumentError(absl::StrCat(entry_name, TF_KERNEL_STAGED_ELEMENTS_SUFFIX,
                                                     " has no -1 end within ", kMaxStagedBuffers,
                                                     " entries"));
    }
    const int64_t count = elements[i];
    if (count == -1) break;
    if (count <= 0 || count > kMaxStagedBytes / 4 - total_bytes / 4) {
      return absl::InvalidArgumentError(
          absl::StrCat(entry_name, TF_KERNEL_STAGED_ELEMENTS_SUFFIX, "[", i, "] = ", count,
                       " elements: not a valid size (all staged buffers together are limited to ",
                       kMaxStagedBytes, " bytes)"));
    }
    total_bytes += count * 4;
    kernel.staged_elements_.push_back(count);
  }
  for (size_t i = 0; i < kernel.staged_elements_.size(); ++i) {
    absl::StatusOr<AlignedFloats> buffer =
        AllocateAlignedFloats(kernel.staged_elements_[i], absl::StrCat("staged buffer ", i));
    if (!buffer.ok()) return buffer.status();
    kernel.args_.push_back(buffer->get());
    kernel.staged_.push_back(std::move(*buffer));
  }
  if (absl::StatusOr<void*> prepare = object.FindSymbol(entry_name + TF_KERNEL_PREPARE_SUFFIX);
      prepare.ok()) {
    kernel.prepare_ = reinterpret_cast<TfKernelEntry>(*prepare);
  }
  if (absl::StatusOr<void*> finish = object.FindSymbol(entry_name + TF_KERNEL_FINISH_SUFFIX);
      finish.ok()) {
    kernel.finish_ = reinterpret_cast<TfKernelEntry>(*finish);
  }
  return kernel;
}

std::vector<CacheFlushRange> StagedKernel::StagedRanges() const {
  std::vector<CacheFlushRange> ranges;
  for (size_t i = 0; i < staged_.size(); ++i) {
    ranges.push_back({staged_[i].get(), static_cast<size_t>(staged_elements_[i]) * sizeof(float)});
  }
  return ranges;
}

}  // namespace tunefleet

// The artifact of a GPU kernel: what toolchain/ emits for a `cuda`
// target and kernel_runtime/'s runner loads through the CUDA driver API. It
// travels in the same bytes field as a CPU shared object (BuildResult /
// RunRequest.shared_object) and is hashed the same way, so the launch
// geometry is part of the artifact's identity.
//
// Format: PTX text whose first line is a header comment
//
//   // tunefleet-gpu-kernel entry=<name> grid=<x>,<y>,<z> block=<x>,<y>,<z> shared_bytes=<n>
//
// followed by the PTX module (ptxas and cuModuleLoadData ignore the comment).
// The entry takes one `.param .u64` global pointer per tensor of the
// workload, inputs first, then outputs, in the workload's layout, and writes
// every output element. `shared_bytes` is the static shared memory the kernel
// declares (informational: it is already in the PTX; no dynamic shared memory
// is requested at launch).
#ifndef TUNEFLEET_COMMON_GPU_ARTIFACT_H_
#define TUNEFLEET_COMMON_GPU_ARTIFACT_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {

struct GpuLaunch {
  std::string entry;
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t shared_bytes = 0;

  int64_t threads_per_block() const { return block[0] * block[1] * block[2]; }
};

struct GpuArtifact {
  GpuLaunch launch;
  std::string ptx;  // the module, header line excluded
};

// True when `bytes` starts with the header line's marker.
bool IsGpuArtifact(absl::string_view bytes);

// Header line + "\n" + ptx.
std::string FormatGpuArtifact(const GpuLaunch& launch, absl::string_view ptx);

// InvalidArgument naming the malformed part: a missing or unknown header
// field, a non-positive dimension, an empty entry or module.
[[nodiscard]] absl::StatusOr<GpuArtifact> ParseGpuArtifact(absl::string_view bytes);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_GPU_ARTIFACT_H_

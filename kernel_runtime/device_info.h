// What this machine is, for the agent's Register message (DeviceInfo in
// proto/fleet.proto): architecture, CPU model, the ISA features that matter
// for kernels, cores, memory, and LLVM's CPU name when it can be guessed;
// and, when the CUDA driver has one, the NVIDIA GPU (name, compute
// capability, per-block limits).
//
//   proto::DeviceInfo device = DetectHostDevice();
//   TF_ASSIGN_OR_RETURN(proto::DeviceInfo device,
//                       DetectAgentDevice({.gpu_ordinal = 0, .require_gpu = true}));
//
// Informational: the tracker schedules by device key, not by these fields.
#ifndef TUNEFLEET_KERNEL_RUNTIME_DEVICE_INFO_H_
#define TUNEFLEET_KERNEL_RUNTIME_DEVICE_INFO_H_

#include <string>

#include "absl/status/statusor.h"
#include "kernel_runtime/cuda_driver.h"
#include "proto/fleet.pb.h"

namespace tunefleet {

// Reads /proc/cpuinfo, /proc/meminfo, uname and the affinity mask. Fields it
// cannot determine are left empty / 0; never fails.
proto::DeviceInfo DetectHostDevice();

// The parsing behind DetectHostDevice, for tests: fills cpu_model,
// isa_features (kernel-relevant ones only, in a fixed order; "asimd" also
// adds "neon"), memory_bytes and llvm_cpu (a best guess, or empty) from the
// files' text; `arch` is copied.
proto::DeviceInfo ParseDeviceInfo(const std::string& arch, const std::string& cpuinfo,
                                  const std::string& meminfo);

// The GPU at `ordinal` as the CUDA driver `library` describes it (no CUDA
// context is created). FailedPrecondition "no CUDA driver: ..." or "no CUDA
// device: ..." when there is none, InvalidArgument for an ordinal out of
// range.
[[nodiscard]] absl::StatusOr<GpuDeviceProperties> DetectGpu(
    int ordinal, const std::string& library = kLibCudaName);

// Copies `gpu` into the GPU fields of `device`: gpu_name,
// compute_capability_major/minor, max_threads_per_block,
// max_shared_memory_per_block, max_registers_per_block.
void SetGpuInfo(const GpuDeviceProperties& gpu, proto::DeviceInfo* device);

struct AgentDeviceOptions {
  int gpu_ordinal = 0;       // the agent's --gpu_device
  bool require_gpu = false;  // the agent's --gpu
  std::string cuda_library = kLibCudaName;
};

// DetectHostDevice, plus the GPU fields when the driver has a GPU at
// gpu_ordinal (logged at INFO either way, with the reason when there is
// none). Fails only when require_gpu and there is no usable GPU, with
// DetectGpu's error.
[[nodiscard]] absl::StatusOr<proto::DeviceInfo> DetectAgentDevice(
    const AgentDeviceOptions& options);

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_DEVICE_INFO_H_

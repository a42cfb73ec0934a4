// gpu_info: what the agent's GPU detection sees (kernel_runtime/device_info.h)
// and the FP32 peak (gpu_peak.h), as one line of JSON for scripts:
//
//   bazel-bin/bench/gpu_info --device 0
//   {"device":0,"name":"NVIDIA H100 80GB HBM3","compute_capability":"9.0","sm":"sm_90",...}
//
// Exits 1 with the reason on stderr when there is no usable GPU.
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "bench/gpu_peak.h"
#include "kernel_runtime/cuda_driver.h"
#include "nlohmann/json.hpp"

ABSL_FLAG(int, device, 0, "CUDA device ordinal");
ABSL_FLAG(std::string, cuda_driver, tunefleet::kLibCudaName, "CUDA driver library");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int ordinal = absl::GetFlag(FLAGS_device);
  auto driver = tunefleet::CudaDriver::Open(absl::GetFlag(FLAGS_cuda_driver));
  absl::StatusOr<tunefleet::CUdevice> device =
      driver.ok() ? (*driver)->Device(ordinal)
                  : absl::StatusOr<tunefleet::CUdevice>(driver.status());
  absl::StatusOr<tunefleet::GpuDeviceProperties> gpu =
      device.ok() ? (*driver)->Properties(*device)
                  : absl::StatusOr<tunefleet::GpuDeviceProperties>(device.status());
  if (!gpu.ok()) {
    std::cerr << "gpu_info: " << gpu.status().message() << "\n";
    return 1;
  }
  nlohmann::json info = {
      {"device", ordinal},
      {"name", gpu->name},
      {"compute_capability",
       absl::StrCat(gpu->compute_capability_major, ".", gpu->compute_capability_minor)},
      {"sm", absl::StrCat("sm_", gpu->compute_capability_major, gpu->compute_capability_minor)},
      {"multiprocessors", gpu->multiprocessor_count},
      {"clock_mhz", gpu->clock_rate_khz / 1000.0},
      {"max_threads_per_block", gpu->max_threads_per_block},
      {"max_shared_memory_per_block", gpu->max_shared_memory_per_block},
      {"max_shared_memory_per_block_optin", gpu->max_shared_memory_per_block_optin},
      {"max_registers_per_block", gpu->max_registers_per_block},
      {"driver_version", (*driver)->version()},
  };
  const std::optional<int> lanes =
      tunefleet::Fp32LanesPerSm(gpu->compute_capability_major, gpu->compute_capability_minor);
  info["fp32_lanes_per_sm"] = lanes.has_value() ? nlohmann::json(*lanes) : nlohmann::json();
  absl::StatusOr<double> peak = tunefleet::Fp32PeakGflops(*gpu);
  info["fp32_peak_gflops"] = peak.ok() ? nlohmann::json(*peak) : nlohmann::json();
  if (!peak.ok()) std::cerr << "gpu_info: " << peak.status().message() << "\n";
  std::cout << info.dump() << "\n";
  return 0;
}

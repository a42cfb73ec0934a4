#include "kernel_runtime/device_info.h"

#include <sys/utsname.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "kernel_runtime/thread_pool.h"
#include "target/arch_registry.h"
#include "target/cpuinfo.h"

namespace tunefleet {
namespace {

// A /proc file; empty when unreadable (the fields then read as unknown).
std::string ReadFile(const char* path) {
  return ReadFileToString(path, kMaxConfigFileBytes).value_or("");
}

int CountCores() {
  const std::vector<int> allowed = AllowedCpus();
  if (!allowed.empty()) return static_cast<int>(allowed.size());
  return static_cast<int>(std::thread::hardware_concurrency());
}

}  // namespace

proto::DeviceInfo ParseDeviceInfo(const std::string& arch, const std::string& cpuinfo,
                                  const std::string& meminfo) {
  proto::DeviceInfo device;
  device.set_arch(arch);
  std::string model = CpuinfoValue(cpuinfo, "model name");
  if (model.empty()) model = CpuinfoValue(cpuinfo, "Hardware");
  device.set_cpu_model(model);

  int64_t mem_kb = 0;
  std::string mem_total = CpuinfoValue(meminfo, "MemTotal");  // "16318412 kB"
  if (absl::SimpleAtoi(mem_total.substr(0, mem_total.find(' ')), &mem_kb)) {
    device.set_memory_bytes(mem_kb * 1024);
  }

  // The features and the CPU name are the architecture's to read; a machine
  // no target/ folder describes reports neither.
  const Arch* described = FindArch(arch);
  if (described == nullptr) return device;
  absl::flat_hash_set<std::string> flags;
  for (absl::string_view flag : absl::StrSplit(
           CpuinfoValue(cpuinfo, described->CpuinfoFeatureLabel()), ' ', absl::SkipEmpty())) {
    flags.insert(std::string(flag));
  }
  auto has = [&flags](absl::string_view flag) { return flags.contains(flag); };
  for (const std::string& feature : described->ReportedFeatures(has)) {
    device.add_isa_features(feature);
  }
  device.set_llvm_cpu(described->LlvmCpuName(cpuinfo, has));
  return device;
}

proto::DeviceInfo DetectHostDevice() {
  struct utsname names;
  const std::string arch = uname(&names) == 0 ? names.machine : "";
  proto::DeviceInfo device = ParseDeviceInfo(arch, ReadHostCpuinfo(), ReadFile("/proc/meminfo"));
  device.set_cores(CountCores());
  return device;
}

[[nodiscard]] absl::StatusOr<GpuDeviceProperties> DetectGpu(int ordinal,
                                                            const std::string& library) {
  absl::StatusOr<std::unique_ptr<CudaDriver>> driver = CudaDriver::Open(library);
  if (!driver.ok()) return driver.status();
  absl::StatusOr<CUdevice> device = (*driver)->Device(ordinal);
  if (!device.ok()) return device.status();
  absl::StatusOr<GpuDeviceProperties> properties = (*driver)->Properties(*device);
  if (properties.ok()) properties->ordinal = ordinal;
  return properties;
}

void SetGpuInfo(const GpuDeviceProperties& gpu, proto::DeviceInfo* device) {
  device->set_gpu_name(gpu.name);
  device->set_compute_capability_major(gpu.compute_capability_major);
  device->set_compute_capability_minor(gpu.compute_capability_minor);
  device->set_max_threads_per_block(gpu.max_threads_per_block);
  device->set_max_shared_memory_per_block(gpu.max_shared_memory_per_block);
  device->set_max_registers_per_block(gpu.max_registers_per_block);
}

[[nodiscard]] absl::StatusOr<proto::DeviceInfo> DetectAgentDevice(
    const AgentDeviceOptions& options) {
  proto::DeviceInfo device = DetectHostDevice();
  absl::StatusOr<GpuDeviceProperties> gpu = DetectGpu(options.gpu_ordinal, options.cuda_library);
  if (!gpu.ok()) {
    if (options.require_gpu) {
      return absl::Status(
          gpu.status().code(),
          absl::StrCat("--gpu: no usable GPU ", options.gpu_ordinal, ": ", gpu.status().message()));
    }
    TF_LOG(INFO) << "no GPU: measuring CPU kernels only (" << gpu.status().message() << ")";
    return device;
  }
  SetGpuInfo(*gpu, &device);
  TF_LOG(INFO) << "GPU " << options.gpu_ordinal << ": " << gpu->name << ", sm_"
               << gpu->compute_capability_major << gpu->compute_capability_minor << ", "
               << gpu->multiprocessor_count << " SMs at " << gpu->clock_rate_khz / 1000
               << " MHz; GPU kernels run on it";
  return device;
}

}  // namespace tunefleet

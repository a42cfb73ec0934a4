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

namespace tunefleet {
namespace {

// Features worth knowing when choosing a device key or reading a record, in
// the order they are reported.
constexpr const char* kInterestingFeatures[] = {
    // x86
    "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512cd", "avx512dq", "avx512bw",
    "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_int8",
    "amx_bf16",
    // AArch64
    "neon", "asimd", "asimdhp", "asimddp", "fphp", "i8mm", "bf16", "sve", "sve2"};

// A /proc file; empty when unreadable (the fields then read as unknown).
std::string ReadFile(const char* path) {
  return ReadFileToString(path, kMaxConfigFileBytes).value_or("");
}

// The value of the first "key : value" line of `text` whose key is `key`.
std::string FirstValue(absl::string_view text, absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    if (absl::StripAsciiWhitespace(line.substr(0, colon)) == key) {
      return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  }
  return "";
}

// LLVM's name for an ARM core, from the cpuinfo "CPU part" number.
std::string ArmCpuName(const std::string& part) {
  static const std::pair<const char*, const char*> kParts[] = {
      {"0xd03", "cortex-a53"},  {"0xd04", "cortex-a35"},  {"0xd05", "cortex-a55"},
      {"0xd07", "cortex-a57"},  {"0xd08", "cortex-a72"},  {"0xd09", "cortex-a73"},
      {"0xd0a", "cortex-a75"},  {"0xd0b", "cortex-a76"},  {"0xd0c", "neoverse-n1"},
      {"0xd0d", "cortex-a77"},  {"0xd40", "neoverse-v1"}, {"0xd41", "cortex-a78"},
      {"0xd49", "neoverse-n2"}, {"0xd4f", "neoverse-v2"}};
  for (const auto& [number, name] : kParts) {
    if (absl::EqualsIgnoreCase(part, number)) return name;
  }
  return "";
}

// A coarse guess from the feature set: right for the common server parts,
// empty when nothing fits. Informational only.
std::string X86CpuName(const std::string& model, const absl::flat_hash_set<std::string>& flags) {
  const bool amd = absl::StrContains(model, "AMD");
  auto has = [&](const char* flag) { return flags.contains(flag); };
  if (amd) {
    if (has("avx512f")) return "znver4";
    if (has("vaes") && has("avx2")) return "znver3";
    if (has("avx2")) return "znver2";
    return "";
  }
  if (has("amx_tile")) return "sapphirerapids";
  if (has("avx512_vnni")) return "cascadelake";
  if (has("avx512f")) return "skylake-avx512";
  if (has("avx2") && has("fma")) return "haswell";
  return "";
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
  std::string model = FirstValue(cpuinfo, "model name");
  if (model.empty()) model = FirstValue(cpuinfo, "Hardware");
  device.set_cpu_model(model);

  // x86 says "flags", AArch64 says "Features".
  std::string flag_text = FirstValue(cpuinfo, "flags");
  if (flag_text.empty()) flag_text = FirstValue(cpuinfo, "Features");
  absl::flat_hash_set<std::string> flags;
  for (absl::string_view flag : absl::StrSplit(flag_text, ' ', absl::SkipEmpty())) {
    flags.insert(std::string(flag));
  }
  if (flags.contains("asimd")) flags.insert("neon");
  for (const char* feature : kInterestingFeatures) {
    if (flags.contains(feature)) device.add_isa_features(feature);
  }

  int64_t mem_kb = 0;
  std::string mem_total = FirstValue(meminfo, "MemTotal");  // "16318412 kB"
  if (absl::SimpleAtoi(mem_total.substr(0, mem_total.find(' ')), &mem_kb)) {
    device.set_memory_bytes(mem_kb * 1024);
  }

  const std::string part = FirstValue(cpuinfo, "CPU part");
  if (!part.empty()) {
    device.set_llvm_cpu(ArmCpuName(part));
  } else if (arch == "x86_64") {
    device.set_llvm_cpu(X86CpuName(model, flags));
  }
  return device;
}

proto::DeviceInfo DetectHostDevice() {
  struct utsname names;
  const std::string arch = uname(&names) == 0 ? names.machine : "";
  proto::DeviceInfo device =
      ParseDeviceInfo(arch, ReadFile("/proc/cpuinfo"), ReadFile("/proc/meminfo"));
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

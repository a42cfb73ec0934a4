#include "kernel_runtime/device_info.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;

TEST(DeviceInfoTest, ParsesAnX86CpuinfoKeepingKernelRelevantFlags) {
  const char* cpuinfo =
      "processor\t: 0\n"
      "model name\t: Intel(R) Xeon(R) Platinum 8480+\n"
      "flags\t\t: fpu vme sse4_2 avx avx2 fma avx512f avx512bw avx512vl avx512_vnni amx_tile "
      "ht pni\n\n"
      "processor\t: 1\n"
      "model name\t: Intel(R) Xeon(R) Platinum 8480+\n";
  const proto::DeviceInfo device =
      ParseDeviceInfo("x86_64", cpuinfo, "MemTotal:       16318412 kB\nMemFree: 1 kB\n");
  EXPECT_EQ(device.arch(), "x86_64");
  EXPECT_EQ(device.cpu_model(), "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_THAT(device.isa_features(),
              ElementsAre("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl",
                          "avx512_vnni", "amx_tile"));
  EXPECT_EQ(device.memory_bytes(), int64_t{16318412} * 1024);
  EXPECT_EQ(device.llvm_cpu(), "sapphirerapids");
}

TEST(DeviceInfoTest, ParsesAnRk3399BigCoreAsCortexA72WithNeon) {
  const char* cpuinfo =
      "processor\t: 4\n"
      "BogoMIPS\t: 48.00\n"
      "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid\n"
      "CPU implementer\t: 0x41\n"
      "CPU part\t: 0xd08\n";
  const proto::DeviceInfo device = ParseDeviceInfo("aarch64", cpuinfo, "");
  EXPECT_THAT(device.isa_features(), ElementsAre("neon", "asimd"));
  EXPECT_EQ(device.llvm_cpu(), "cortex-a72");
  EXPECT_EQ(device.memory_bytes(), 0);
}

TEST(DeviceInfoTest, UnknownCpuLeavesLlvmCpuEmpty) {
  const proto::DeviceInfo device = ParseDeviceInfo("x86_64", "flags : fpu sse2\n", "");
  EXPECT_EQ(device.llvm_cpu(), "");
  EXPECT_TRUE(device.isa_features().empty());
}

TEST(DeviceInfoTest, DetectsThisHost) {
  const proto::DeviceInfo device = DetectHostDevice();
  EXPECT_FALSE(device.arch().empty());
  EXPECT_GT(device.cores(), 0);
  EXPECT_GT(device.memory_bytes(), 0);
}

TEST(DeviceInfoTest, GpuPropertiesFillTheGpuFields) {
  GpuDeviceProperties gpu;
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.compute_capability_major = 9;
  gpu.compute_capability_minor = 0;
  gpu.max_threads_per_block = 1024;
  gpu.max_shared_memory_per_block = 49152;
  gpu.max_registers_per_block = 65536;
  proto::DeviceInfo device;
  device.set_cpu_model("Intel(R) Xeon(R) Platinum 8480+");
  SetGpuInfo(gpu, &device);
  EXPECT_EQ(device.gpu_name(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(device.compute_capability_major(), 9);
  EXPECT_EQ(device.compute_capability_minor(), 0);
  EXPECT_EQ(device.max_threads_per_block(), 1024);
  EXPECT_EQ(device.max_shared_memory_per_block(), 49152);
  EXPECT_EQ(device.max_registers_per_block(), 65536);
  EXPECT_EQ(device.cpu_model(), "Intel(R) Xeon(R) Platinum 8480+");
}

TEST(DeviceInfoTest, WithoutADriverTheAgentStaysACpuAgentUnlessAGpuIsRequired) {
  const std::string missing = "/nonexistent/libcuda.so.1";
  absl::StatusOr<GpuDeviceProperties> gpu = DetectGpu(0, missing);
  EXPECT_EQ(gpu.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(gpu.status().message(),
              ::testing::HasSubstr("no CUDA driver: dlopen(/nonexistent/libcuda.so.1)"));

  absl::StatusOr<proto::DeviceInfo> cpu_agent =
      DetectAgentDevice({.gpu_ordinal = 0, .require_gpu = false, .cuda_library = missing});
  ASSERT_TRUE(cpu_agent.ok()) << cpu_agent.status();
  EXPECT_GT(cpu_agent->cores(), 0);
  EXPECT_EQ(cpu_agent->gpu_name(), "");

  absl::StatusOr<proto::DeviceInfo> gpu_agent =
      DetectAgentDevice({.gpu_ordinal = 1, .require_gpu = true, .cuda_library = missing});
  EXPECT_EQ(gpu_agent.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(gpu_agent.status().message(),
              ::testing::HasSubstr("--gpu: no usable GPU 1: no CUDA driver: dlopen("));
}

}  // namespace
}  // namespace tunefleet

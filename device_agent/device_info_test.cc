#include "device_agent/device_info.h"

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
  EXPECT_THAT(device.isa_features(), ElementsAre("sse4_2", "avx", "avx2", "fma", "avx512f",
                                                 "avx512bw", "avx512vl", "avx512_vnni", "amx_tile"));
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

}  // namespace
}  // namespace tunefleet

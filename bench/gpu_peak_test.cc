#include "bench/gpu_peak.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

GpuDeviceProperties Gpu(const char* name, int major, int minor, int sms, int clock_khz) {
  GpuDeviceProperties gpu;
  gpu.name = name;
  gpu.compute_capability_major = major;
  gpu.compute_capability_minor = minor;
  gpu.multiprocessor_count = sms;
  gpu.clock_rate_khz = clock_khz;
  return gpu;
}

// Datasheet FP32 peaks (non-tensor), in GFLOPS.
TEST(GpuPeakTest, MatchesTheDatasheets) {
  EXPECT_NEAR(*Fp32PeakGflops(Gpu("H100 SXM5", 9, 0, 132, 1980000)), 66908, 1);  // 67 TFLOPS
  EXPECT_NEAR(*Fp32PeakGflops(Gpu("H100 PCIe", 9, 0, 114, 1755000)), 51217, 1);  // 51 TFLOPS
  EXPECT_NEAR(*Fp32PeakGflops(Gpu("A100 SXM4", 8, 0, 108, 1410000)), 19492, 1);  // 19.5 TFLOPS
  EXPECT_NEAR(*Fp32PeakGflops(Gpu("RTX 4090", 8, 9, 128, 2520000)), 82575, 1);   // 82.6 TFLOPS
  EXPECT_NEAR(*Fp32PeakGflops(Gpu("V100 SXM2", 7, 0, 80, 1530000)), 15667, 1);   // 15.7 TFLOPS
}

TEST(GpuPeakTest, UnknownComputeCapabilityIsNotFound) {
  EXPECT_EQ(Fp32LanesPerSm(9, 9), std::nullopt);
  absl::StatusOr<double> peak = Fp32PeakGflops(Gpu("Future GPU", 42, 0, 100, 2000000));
  EXPECT_EQ(peak.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(peak.status().message(), ::testing::HasSubstr("compute capability 42.0"));
}

TEST(GpuPeakTest, MissingAttributesAreInvalidArgument) {
  EXPECT_EQ(Fp32PeakGflops(Gpu("H100", 9, 0, 0, 1980000)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunefleet

// The FP32 peak of an NVIDIA GPU from its device attributes, for reporting
// tuned kernels and cuBLAS as a fraction of what the chip can do:
//
//   peak FLOP/s = SMs x SM clock x FP32 lanes per SM x 2 (an FMA is 2 FLOPs)
//
//   TF_ASSIGN_OR_RETURN(GpuDeviceProperties gpu, DetectGpu(0));
//   TF_ASSIGN_OR_RETURN(double peak_gflops, Fp32PeakGflops(gpu));
//
// The clock is the driver's CU_DEVICE_ATTRIBUTE_CLOCK_RATE, the maximum
// (boost) SM clock, as NVIDIA's datasheet peaks use: an H100 SXM5 gives
// 132 x 1.98 GHz x 128 x 2 = 66.9 TFLOPS (datasheet: 67). Sustained clocks
// under a full FP32 load can be lower, so a kernel rarely reaches 100%.
#ifndef TUNEFLEET_BENCH_GPU_PEAK_H_
#define TUNEFLEET_BENCH_GPU_PEAK_H_

#include <optional>

#include "absl/status/statusor.h"
#include "kernel_runtime/cuda_driver.h"

namespace tunefleet {

// FP32 results (add, multiply or FMA) per clock per SM for a compute
// capability; nullopt for one the table does not know.
std::optional<int> Fp32LanesPerSm(int major, int minor);

// The formula above in GFLOPS. NotFound naming the compute capability when
// the table lacks it, InvalidArgument when the SM count or clock is 0.
[[nodiscard]] absl::StatusOr<double> Fp32PeakGflops(const GpuDeviceProperties& gpu);

}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_GPU_PEAK_H_

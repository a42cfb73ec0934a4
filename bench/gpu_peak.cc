#include "bench/gpu_peak.h"

#include "absl/strings/str_cat.h"

namespace tunefleet {

std::optional<int> Fp32LanesPerSm(int major, int minor) {
  // Source: NVIDIA CUDA C++ Programming Guide, "Arithmetic Instructions",
  // table "Throughput of Native Arithmetic Instructions (Operations per
  // Clock Cycle per Multiprocessor)", row "32-bit floating-point add,
  // multiply, multiply-add" (CUDA 12.x/13.x editions; Kepler and Fermi from
  // the older editions).
  struct Row {
    int major, minor, lanes;
  };
  static constexpr Row kTable[] = {
      {2, 0, 32},   {2, 1, 48},                                // Fermi
      {3, 0, 192},  {3, 2, 192},  {3, 5, 192},  {3, 7, 192},   // Kepler
      {5, 0, 128},  {5, 2, 128},  {5, 3, 128},                 // Maxwell
      {6, 0, 64},   {6, 1, 128},  {6, 2, 128},                 // Pascal (P100: 64)
      {7, 0, 64},   {7, 2, 64},   {7, 5, 64},                  // Volta, Turing
      {8, 0, 64},   {8, 6, 128},  {8, 7, 128},  {8, 9, 128},   // Ampere (A100: 64), Ada
      {9, 0, 128},                                             // Hopper (H100, H200)
      {10, 0, 128}, {10, 1, 128}, {10, 3, 128}, {11, 0, 128},  // Blackwell (B200, B300, Thor)
      {12, 0, 128}, {12, 1, 128},                              // Blackwell (RTX 50, GB10)
  };
  for (const Row& row : kTable) {
    if (row.major == major && row.minor == minor) return row.lanes;
  }
  return std::nullopt;
}

[[nodiscard]] absl::StatusOr<double> Fp32PeakGflops(const GpuDeviceProperties& gpu) {
  const std::optional<int> lanes =
      Fp32LanesPerSm(gpu.compute_capability_major, gpu.compute_capability_minor);
  if (!lanes.has_value()) {
    return absl::NotFoundError(absl::StrCat(
        "no FP32 lanes-per-SM figure for compute capability ", gpu.compute_capability_major, ".",
        gpu.compute_capability_minor, " (", gpu.name, "); add it to bench/gpu_peak.cc"));
  }
  if (gpu.multiprocessor_count <= 0 || gpu.clock_rate_khz <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot compute the FP32 peak of ", gpu.name,
                                                   ": ", gpu.multiprocessor_count, " SMs at ",
                                                   gpu.clock_rate_khz, " kHz"));
  }
  return static_cast<double>(gpu.multiprocessor_count) * gpu.clock_rate_khz * 1e3 * *lanes * 2 /
         1e9;
}

}  // namespace tunefleet

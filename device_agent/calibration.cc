#include "device_agent/calibration.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/median.h"
#include "common/status_macros.h"
#include "kernel_runtime/time_evaluator.h"

namespace tunefleet {
namespace {

// 8 lanes of float in GCC's portable vector type: one vector register on
// AVX, two on SSE or NEON; the same source on every host of a key.
typedef float Lanes __attribute__((vector_size(32)));

constexpr int kChains = 8;             // independent accumulators (latency hidden)
constexpr int kLanes = 8;              // floats per chain
constexpr int64_t kIterations = 4096;  // multiply-adds per chain per call

// One call: kIterations steps of x = a*x + b on every chain. The chains
// converge to b / (1 - a), so nothing overflows or goes denormal however
// often it runs. noinline and the volatile sink keep the work from being
// folded away or hoisted out of the timing loop.
__attribute__((noinline)) float CalibrationKernel(float seed) {
  Lanes x[kChains];
  for (int c = 0; c < kChains; ++c) {
    for (int l = 0; l < kLanes; ++l) x[c][l] = seed + 0.001f * static_cast<float>(c * kLanes + l);
  }
  Lanes a, b;
  for (int l = 0; l < kLanes; ++l) {
    a[l] = 0.999f;
    b[l] = 0.0005f;
  }
  for (int64_t i = 0; i < kIterations; ++i) {
    for (int c = 0; c < kChains; ++c) x[c] = a * x[c] + b;
  }
  float sum = 0;
  for (int c = 0; c < kChains; ++c) {
    for (int l = 0; l < kLanes; ++l) sum += x[c][l];
  }
  return sum;
}

volatile float calibration_sink = 0;

}  // namespace

absl::Status CalibrationOptions::Validate() const {
  if (repeat < 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("calibration repeat must be >= 3 (a spread needs them), got ", repeat));
  }
  if (min_repeat_ms < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("calibration min_repeat_ms must be >= 1, got ", min_repeat_ms));
  }
  return absl::OkStatus();
}

int64_t CalibrationKernelFlops() { return kIterations * kChains * kLanes * 2; }

[[nodiscard]] absl::StatusOr<CalibrationFigures> RunCalibration(const CalibrationOptions& options,
                                                                ClockInterface& clock) {
  TF_RETURN_IF_ERROR(options.Validate());
  TimeEvaluatorOptions timing;
  timing.number = 1;
  timing.repeat = options.repeat;
  timing.min_repeat_ms = options.min_repeat_ms;
  float seed = 1.0f;
  absl::StatusOr<TimeEvaluation> timed = EvaluateTime(
      [&seed]() -> int32_t {
        calibration_sink = CalibrationKernel(seed);
        seed += 1e-6f;
        return 0;
      },
      timing, clock);
  if (!timed.ok()) {
    return absl::InternalError(absl::StrCat("calibration kernel: ", timed.status().message()));
  }
  // The throughput of the fastest kept repeat: what the core can do now
  // (a throttled or slower core is slower here too), unlike the mean, which
  // a neighbour's burst drags down; the spread below says how steady it is.
  const double fastest = *std::min_element(timed->costs.begin(), timed->costs.end());
  if (!(fastest > 0) || !std::isfinite(fastest)) {
    return absl::InternalError(
        absl::StrCat("calibration kernel: cost ", fastest, " s is not a time"));
  }
  // The spread as a robust relative deviation (1.4826 x the median absolute
  // deviation, which estimates the standard deviation of normal noise) of
  // the kept costs: one interrupt or preemption in twelve repeats is not
  // what makes a host noisy; steady jitter from a neighbour or a wandering
  // clock is.
  std::vector<double> costs = timed->costs;
  const double median = Median(costs);
  for (double& c : costs) c = std::abs(c - median);
  CalibrationFigures figures;
  figures.gflops = static_cast<double>(CalibrationKernelFlops()) / fastest / 1e9;
  figures.noise = 1.4826 * Median(costs) / median;
  figures.repeats = timed->timed_repeats;
  return figures;
}

}  // namespace tunefleet

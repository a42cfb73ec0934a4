#include "proto_convert/measure_result.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "target/arch_registry.h"

namespace tunefleet {
namespace {

constexpr double kFailedCost = 1e9;  // AutoTVM's cost of a failed trial

// PlausiblePeakGflops' factors (see the header).
constexpr int kUnknownCores = 256;
constexpr double kFmaPipesPerCore = 2;
constexpr double kFlopsPerFma = 2;
constexpr double kClockCapGhz = 6.0;
constexpr double kAlgorithmicSlack = 4;
constexpr double kGpuPeakGflops = 5e6;

// The widest the device's features allow, asked of every architecture (a
// device may not say its own); unknown: assume wide.
int Fp32Lanes(const proto::DeviceInfo& device) {
  auto has = [&](absl::string_view feature) {
    return std::find(device.isa_features().begin(), device.isa_features().end(), feature) !=
           device.isa_features().end();
  };
  int lanes = 0;
  for (const Arch* arch : AllArchs()) lanes = std::max(lanes, arch->Fp32Lanes(has));
  return lanes > 0 ? lanes : 16;
}

}  // namespace

MeasureResult ToMeasureResult(const proto::TrialResult& result) {
  MeasureResult measure;
  const int error_no = result.error_no();
  measure.error_no = (error_no >= static_cast<int>(MeasureErrorNo::kNoError) &&
                      error_no <= static_cast<int>(MeasureErrorNo::kUnknown))
                         ? static_cast<MeasureErrorNo>(error_no)
                         : MeasureErrorNo::kUnknown;
  measure.error_msg = result.error_msg();
  measure.all_cost = result.all_cost();
  measure.timestamp = result.timestamp();
  if (measure.ok() && result.costs_size() > 0) {
    measure.costs.assign(result.costs().begin(), result.costs().end());
    measure.timed_repeats = result.timed_repeats();
    if (result.has_cost_stddev_s()) measure.cost_stddev_s = result.cost_stddev_s();
    if (result.has_cost_rel_ci()) measure.cost_rel_ci = result.cost_rel_ci();
    // A zero, negative or non-finite time is never a measurement.
    return RejectInvalidCosts(std::move(measure), /*flops=*/0, /*max_gflops=*/0);
  }
  if (measure.ok()) {
    // A success without costs is not one: never record it as a 0 s kernel.
    measure.error_no = MeasureErrorNo::kUnknown;
    measure.error_msg = "reported success but no costs";
  }
  measure.costs = {kFailedCost};
  return measure;
}

MeasureResult ToMeasureResult(const proto::RunResult& result, double timestamp_unix_s) {
  // The two messages share these fields; one set of rules reads them.
  proto::TrialResult trial;
  trial.mutable_costs()->CopyFrom(result.costs());
  trial.set_error_no(result.error_no());
  trial.set_error_msg(result.error_msg());
  trial.set_all_cost(result.prepare_seconds() + result.load_seconds() + result.check_seconds() +
                     result.run_seconds());
  trial.set_timestamp(timestamp_unix_s);
  trial.set_timed_repeats(result.timed_repeats());
  if (result.has_cost_stddev_s()) trial.set_cost_stddev_s(result.cost_stddev_s());
  if (result.has_cost_rel_ci()) trial.set_cost_rel_ci(result.cost_rel_ci());
  return ToMeasureResult(trial);
}

proto::TrialResult ToTrialResult(const MeasureResult& result) {
  proto::TrialResult trial;
  trial.mutable_costs()->Add(result.costs.begin(), result.costs.end());
  trial.set_error_no(static_cast<int>(result.error_no));
  trial.set_error_msg(result.error_msg);
  trial.set_all_cost(result.all_cost);
  trial.set_timestamp(result.timestamp);
  trial.set_timed_repeats(result.timed_repeats);
  if (result.cost_stddev_s.has_value()) trial.set_cost_stddev_s(*result.cost_stddev_s);
  if (result.cost_rel_ci.has_value()) trial.set_cost_rel_ci(*result.cost_rel_ci);
  return trial;
}

proto::TrialResult ToTrialResult(const proto::RunResult& run, double timestamp_unix_s) {
  return ToTrialResult(ToMeasureResult(run, timestamp_unix_s));
}

[[nodiscard]] absl::Status ValidateCosts(absl::Span<const double> costs, double flops,
                                         double max_gflops) {
  for (size_t i = 0; i < costs.size(); ++i) {
    const double cost = costs[i];
    if (!std::isfinite(cost) || cost <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cost[", i, "] = ", cost, " s is not a time: costs must be finite and > 0 seconds"));
    }
    if (flops > 0 && max_gflops > 0) {
      const double gflops = flops / cost / 1e9;
      if (gflops > max_gflops) {
        return absl::InvalidArgumentError(
            absl::StrCat("cost[", i, "] = ", cost, " s for ", flops, " FLOP means ", gflops,
                         " GFLOPS, above the device's plausible peak of ", max_gflops, " GFLOPS"));
      }
    }
  }
  return absl::OkStatus();
}

MeasureResult RejectInvalidCosts(MeasureResult result, double flops, double max_gflops) {
  if (!result.ok()) return result;
  const absl::Status valid = ValidateCosts(result.costs, flops, max_gflops);
  if (valid.ok()) return result;
  result.error_no = kInvalidCostError;
  result.error_msg = absl::StrCat("invalid measurement: ", valid.message());
  result.costs = {kFailedCost};
  result.timed_repeats = 0;
  result.cost_stddev_s.reset();
  result.cost_rel_ci.reset();
  return result;
}

proto::RunResult RejectInvalidCosts(proto::RunResult result, double flops, double max_gflops) {
  if (result.error_no() != static_cast<int>(MeasureErrorNo::kNoError)) return result;
  const absl::Status valid = ValidateCosts(result.costs(), flops, max_gflops);
  if (valid.ok()) return result;
  result.set_error_no(static_cast<int>(kInvalidCostError));
  result.set_error_msg(absl::StrCat("invalid measurement: ", valid.message()));
  result.clear_costs();
  result.clear_cost_stddev_s();
  result.clear_cost_rel_ci();
  return result;
}

double PlausiblePeakGflops(const proto::DeviceInfo& device) {
  const int cores = device.cores() > 0 ? device.cores() : kUnknownCores;
  const double cpu = cores * Fp32Lanes(device) * kFmaPipesPerCore * kFlopsPerFma * kClockCapGhz *
                     kAlgorithmicSlack;
  return device.gpu_name().empty() ? cpu : std::max(cpu, kGpuPeakGflops);
}

}  // namespace tunefleet

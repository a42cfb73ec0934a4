#include "tuner_core/measure/measure.h"

#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace tunefleet {

const char* MeasureErrorName(MeasureErrorNo error_no) {
  switch (error_no) {
    case MeasureErrorNo::kNoError:
      return "NO_ERROR";
    case MeasureErrorNo::kInstantiationError:
      return "INSTANTIATION_ERROR";
    case MeasureErrorNo::kCompileHost:
      return "COMPILE_HOST";
    case MeasureErrorNo::kCompileDevice:
      return "COMPILE_DEVICE";
    case MeasureErrorNo::kRuntimeDevice:
      return "RUNTIME_DEVICE";
    case MeasureErrorNo::kWrongAnswer:
      return "WRONG_ANSWER";
    case MeasureErrorNo::kBuildTimeout:
      return "BUILD_TIMEOUT";
    case MeasureErrorNo::kRunTimeout:
      return "RUN_TIMEOUT";
    case MeasureErrorNo::kUnknown:
      return "UNKNOWN";
  }
  return "UNKNOWN";
}

absl::Status MeasureOptions::Validate() const {
  auto bad = [](const char* field, const auto& value, absl::string_view rule) {
    return absl::InvalidArgumentError(
        absl::StrCat("measure option ", field, " = ", value, " is invalid: ", rule));
  };
  if (number < 1) return bad("number", number, "must be >= 1");
  if (repeat < 1 || repeat > kMaxRepeat) {
    return bad("repeat", repeat, absl::StrCat("must be in [1, ", kMaxRepeat, "]"));
  }
  if (min_repeat_ms < 0) return bad("min_repeat_ms", min_repeat_ms, "must be >= 0");
  if (!std::isfinite(cooldown_interval_s) || cooldown_interval_s < 0 ||
      cooldown_interval_s > kMaxCooldownIntervalS) {
    return bad("cooldown_interval_s", cooldown_interval_s,
               absl::StrCat("must be in [0, ", kMaxCooldownIntervalS, "] s"));
  }
  if (!std::isfinite(timeout_s) || timeout_s <= 0) {
    return bad("timeout_s", timeout_s, "must be finite and > 0");
  }
  if (timeout_s > kMaxMeasureTimeoutS) {
    return bad("timeout_s", timeout_s,
               absl::StrCat("exceeds the cap of ", kMaxMeasureTimeoutS,
                            " s per measurement (kMaxMeasureTimeoutS)"));
  }
  if (max_repeat != 0 && (max_repeat < repeat || max_repeat > kMaxRepeat)) {
    return bad(
        "max_repeat", max_repeat,
        absl::StrCat("must be 0 (= repeat) or in [repeat = ", repeat, ", ", kMaxRepeat, "]"));
  }
  if (!std::isfinite(target_rel_ci) || target_rel_ci < 0 || target_rel_ci >= 1) {
    return bad("target_rel_ci", target_rel_ci, "must be in [0, 1), e.g. 0.02 for +-2 %");
  }
  if (target_rel_ci > 0 && EffectiveMaxRepeat() <= repeat) {
    return bad("target_rel_ci", target_rel_ci,
               absl::StrCat("needs max_repeat > repeat (", repeat,
                            ") to add repeats; max_repeat is ", max_repeat));
  }
  if (!std::isfinite(reject_above_s) || reject_above_s < 0) {
    return bad("reject_above_s", reject_above_s, "must be finite and >= 0 (0: off)");
  }
  return absl::OkStatus();
}

double MeasureResult::MeanCost() const {
  if (costs.empty()) return 1e9;
  return std::accumulate(costs.begin(), costs.end(), 0.0) / static_cast<double>(costs.size());
}

double MeasureResult::Throughput() const {
  if (!ok()) return 0;
  const double mean = MeanCost();
  return mean > 0 ? 1.0 / mean : 0;
}

}  // namespace tunefleet

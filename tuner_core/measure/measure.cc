#include "tuner_core/measure/measure.h"

#include <algorithm>
#include <numeric>

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

double MeasureResult::MeanCost() const {
  if (costs.empty()) return 1e9;
  std::vector<double> sorted = costs;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.size() > 2) {
    sorted.erase(sorted.begin());
    sorted.pop_back();
  }
  return std::accumulate(sorted.begin(), sorted.end(), 0.0) / sorted.size();
}

}  // namespace tunefleet

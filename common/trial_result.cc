#include "common/trial_result.h"

namespace tunefleet {

MeasureResult ToMeasureResult(const proto::TrialResult& result) {
  MeasureResult m;
  m.costs.assign(result.costs().begin(), result.costs().end());
  m.error_no = static_cast<MeasureErrorNo>(result.error_no());
  m.error_msg = result.error_msg();
  m.all_cost = result.all_cost();
  m.timestamp = result.timestamp();
  return m;
}

}  // namespace tunefleet

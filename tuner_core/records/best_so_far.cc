#include "tuner_core/records/best_so_far.h"

namespace tunefleet {

double GflopsOf(double flops, double cost_s) { return cost_s > 0 ? flops / cost_s / 1e9 : 0.0; }

bool BestSoFar::Offer(const MeasureResult& result) {
  const int64_t position = results_seen_++;
  if (!result.ok()) return false;
  const double cost = result.MeanCost();
  // A success with a cost that is not positive is not a measurement.
  if (!(cost > 0)) return false;
  if (has_best() && !(cost < cost_s_)) return false;  // ties: the earlier stays
  cost_s_ = cost;
  position_ = position;
  return true;
}

void BestSoFar::Restore(double cost_s, int64_t position, int64_t results_seen) {
  results_seen_ = results_seen;
  if (cost_s > 0) {
    cost_s_ = cost_s;
    position_ = position;
  }
}

}  // namespace tunefleet

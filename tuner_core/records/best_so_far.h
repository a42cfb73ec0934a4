// BestSoFar: the best successful measurement of a search as results arrive,
// the one rule every place that reports "best" uses (the tuning loop, the
// tracker's job table, the tuner process's progress line): only NO_ERROR
// results count, they are compared by MeanCost() (the plain mean of costs
// that were trimmed once, when measured),
// and on a tie the earlier result stays best.
//
//   BestSoFar best;
//   for (...) best.Offer(result);           // true when it became the best
//   if (best.has_best()) Print(best.Gflops(task.workload().flops()));
//
// GflopsOf(flops, cost_s) is the one conversion of a cost to GFLOPS.
#ifndef TUNEFLEET_TUNER_CORE_RECORDS_BEST_SO_FAR_H_
#define TUNEFLEET_TUNER_CORE_RECORDS_BEST_SO_FAR_H_

#include <cstdint>

#include "tuner_core/measure/measure.h"

namespace tunefleet {

// GFLOPS of a kernel doing `flops` in `cost_s` seconds; 0 for a cost <= 0.
double GflopsOf(double flops, double cost_s);

class BestSoFar {
 public:
  // Counts one more result (its position is the number of results offered
  // before it) and returns true when it became the best.
  bool Offer(const MeasureResult& result);
  // Restores a best from stored state (e.g. a job loaded after a restart).
  // A cost <= 0 leaves it unset.
  void Restore(double cost_s, int64_t position, int64_t results_seen);

  bool has_best() const { return cost_s_ > 0; }
  // Mean cost of the best result in seconds; 0 when there is none.
  double cost_s() const { return cost_s_; }
  // Position of the best among the results offered (0-based); -1 when none.
  int64_t position() const { return position_; }
  int64_t results_seen() const { return results_seen_; }
  double Gflops(double flops) const { return GflopsOf(flops, cost_s_); }

 private:
  double cost_s_ = 0;
  int64_t position_ = -1;
  int64_t results_seen_ = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_RECORDS_BEST_SO_FAR_H_

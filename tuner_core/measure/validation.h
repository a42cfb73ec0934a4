// Validated winners (issue 18). A search's best measurement is the luckiest
// of many: the fastest of hundreds of noisy figures is biased low. So before
// a job (or a task of a model job, or a local `tune`) reports its best, the
// top-k configs of the search are measured again, `passes` times each, every
// measurement in a fresh runner child with more repeats than during the
// search, and the passes interleaved (A B C, C B A, A B C) so that a drift
// of the machine's speed over the validation affects every candidate alike.
// A candidate's validated cost is the median of its passes' mean costs; the
// best is the candidate with the lowest validated cost.
//
// The search measurement stays as it was; the validation is kept beside it
// (records: a "validation" object on the search record's line, which
// AutoTVM readers ignore; record.h).
//
//   std::vector<int> top = TopKByCost(search_costs, kDefaultValidateTopK);
//   for (auto [candidate, pass] : ValidationOrder(top.size(), passes)) ...
//       validations[candidate].Add(MeasureResult of that pass);
//   best = the candidate with the lowest validations[c].cost_s()
#ifndef TUNEFLEET_TUNER_CORE_MEASURE_VALIDATION_H_
#define TUNEFLEET_TUNER_CORE_MEASURE_VALIDATION_H_

#include <optional>
#include <utility>
#include <vector>

#include "tuner_core/measure/measure.h"

namespace tunefleet {

inline constexpr int kDefaultValidateTopK = 5;
inline constexpr int kDefaultValidationPasses = 3;
inline constexpr int kMaxValidateTopK = 100;
inline constexpr int kMaxValidationPasses = 20;
// The confidence a validation pass repeats for (95 % CI of its mean within
// +-1 %) unless the search asked for a tighter one.
inline constexpr double kValidationTargetRelCi = 0.01;

// The measure options of one validation pass, from the search's: at least
// twice the search's repeats (and at least 6), adaptive repeats up to three
// times that until the mean's 95 % CI is within kValidationTargetRelCi, the
// timeout scaled by the extra repeats (capped at kMaxMeasureTimeoutS), and
// no correctness check (every candidate passed it in the search). Valid
// whenever `search` is.
MeasureOptions ValidationMeasureOptions(const MeasureOptions& search);

// Indices of the (up to) k smallest of `costs` that are finite and > 0,
// cheapest first; ties go to the lower index.
std::vector<int> TopKByCost(const std::vector<double>& costs, int k);

// The order in which to measure `candidates` configs `passes` times each:
// (candidate, pass) pairs, pass by pass, forward in even passes and
// backward in odd ones.
std::vector<std::pair<int, int>> ValidationOrder(int candidates, int passes);

// One candidate's validation: the passes measured so far.
struct Validation {
  std::vector<double> pass_costs;    // each successful pass's MeanCost, in the order added
  int failed_passes = 0;             // passes that ended in an error
  int timed_repeats = 0;             // summed over the successful passes
  std::optional<double> max_rel_ci;  // the widest pass's relative 95 % CI, when known

  // Counts one pass's result.
  void Add(const MeasureResult& pass);
  bool ok() const { return !pass_costs.empty(); }
  // The validated cost: the median of pass_costs (the mean of the middle
  // two for an even count); 0 when no pass succeeded.
  double cost_s() const;
  // (max - min) / cost_s() over the passes; 0 with fewer than two.
  double rel_spread() const;
};

// The index of the validation with the lowest validated cost among those
// with a successful pass (ties: the lower index); nullopt when none.
std::optional<int> BestValidated(const std::vector<Validation>& validations);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_MEASURE_VALIDATION_H_

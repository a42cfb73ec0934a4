// Local mode's validated winners (issue 18; the core is
// tuner_core/measure/validation.h): after a search, the task's top-k
// configs by search cost are measured again, each measurement in a fresh
// runner child, and the best is the validated best (median of passes), not
// the luckiest search figure. Used by local `tune` and `tune --model`.
//
//   TF_ASSIGN_OR_RETURN(WinnerValidation winners,
//                       ValidateWinners(measurer, all_results, options.local.validation));
//   if (winners.best) ... winners.candidates[*winners.best].validation.cost_s() ...
//
// Also how a figure is named wherever a best is printed (DescribeFigure).
#ifndef TUNEFLEET_LOCAL_VALIDATE_WINNERS_H_
#define TUNEFLEET_LOCAL_VALIDATE_WINNERS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "local/local_measurer.h"
#include "tuner_core/measure/validation.h"
#include "tuner_core/records/record.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/tuners/tuner.h"

namespace tunefleet {

struct ValidatedCandidate {
  Config config;
  MeasureResult search;  // the search's (best) result of this config
  Validation validation;
  std::string last_error;  // the last failed pass's error; empty when none failed
};

struct WinnerValidation {
  std::vector<ValidatedCandidate> candidates;  // by search cost, cheapest first
  std::optional<int> best;                     // BestValidated over candidates
};

// The (up to) k cheapest successful results by MeanCost, cheapest first,
// one per kernel of `space` (its CanonicalIndex: configs that build the same
// kernel, e.g. a log's tile_ow 5 and 6 of a 14-column row, compete as one,
// with their cheapest result); ties go to the earlier result.
std::vector<TrialResult> TopKResults(const std::vector<TrialResult>& results, int k,
                                     const ConfigSpace& space);

// Validates TopKResults(results, options.top_k, the measurer's task's
// space) with measurer.Validate and options.passes. Nothing is measured
// when options.top_k is 0 or no result succeeded (empty candidates). InvalidArgument naming the
// flag for bad options; the errors of LocalMeasurer::Validate.
[[nodiscard]] absl::StatusOr<WinnerValidation> ValidateWinners(
    LocalMeasurer& measurer, const std::vector<TrialResult>& results,
    const LocalValidationOptions& options);

// The records of the validated candidates of `task` (RecordOf, with
// `validation` set), ready for WriteValidationsToLog.
std::vector<Record> ValidatedRecords(const Task& task, const WinnerValidation& winners);

// "median of 3 passes, spread 1.4 %" (", 1 failed" added when a pass
// failed); "no pass succeeded (2 failed)" when none did.
std::string DescribeValidation(const Validation& validation);

// Which figure a record's ReportedCost is: "validated (median of 3 passes,
// spread 1.4 %)" or "search figure, not validated".
std::string DescribeFigure(const Record& record);

}  // namespace tunefleet

#endif  // TUNEFLEET_LOCAL_VALIDATE_WINNERS_H_

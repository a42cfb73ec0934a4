#include "local/validate_winners.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "tuner_core/records/task_record.h"

namespace tunefleet {

std::vector<TrialResult> TopKResults(const std::vector<TrialResult>& results, int k,
                                     const ConfigSpace& space) {
  // One entry per kernel: its cheapest successful result.
  std::vector<const TrialResult*> distinct;
  std::map<int64_t, size_t> slot_of_kernel;
  for (const TrialResult& r : results) {
    if (!r.result.ok()) continue;
    auto [it, inserted] =
        slot_of_kernel.emplace(space.CanonicalIndex(r.config.index()), distinct.size());
    if (inserted) {
      distinct.push_back(&r);
    } else if (r.result.MeanCost() < distinct[it->second]->result.MeanCost()) {
      distinct[it->second] = &r;
    }
  }
  std::vector<double> costs;
  for (const TrialResult* r : distinct) costs.push_back(r->result.MeanCost());
  std::vector<TrialResult> top;
  for (int i : TopKByCost(costs, k)) top.push_back(*distinct[i]);
  return top;
}

[[nodiscard]] absl::StatusOr<WinnerValidation> ValidateWinners(
    LocalMeasurer& measurer, const std::vector<TrialResult>& results,
    const LocalValidationOptions& options) {
  TF_RETURN_IF_ERROR(options.Validate());
  WinnerValidation winners;
  if (options.top_k == 0) return winners;
  std::vector<Config> configs;
  for (TrialResult& r : TopKResults(results, options.top_k, measurer.task().space())) {
    configs.push_back(r.config);
    winners.candidates.push_back(ValidatedCandidate{std::move(r.config), std::move(r.result)});
  }
  if (configs.empty()) return winners;
  TF_ASSIGN_OR_RETURN(LocalValidationRun run, measurer.Validate(configs, options.passes));
  for (size_t i = 0; i < winners.candidates.size(); ++i) {
    winners.candidates[i].validation = run.validations[i];
    winners.candidates[i].last_error = run.last_errors[i];
  }
  winners.best = BestValidated(run.validations);
  return winners;
}

std::vector<Record> ValidatedRecords(const Task& task, const WinnerValidation& winners) {
  std::vector<Record> records;
  for (const ValidatedCandidate& c : winners.candidates) {
    Record record = RecordOf(task, c.config, c.search);
    record.validation = c.validation;
    records.push_back(std::move(record));
  }
  return records;
}

std::string DescribeValidation(const Validation& validation) {
  if (!validation.ok()) {
    return absl::StrCat("no pass succeeded (", validation.failed_passes, " failed)");
  }
  const size_t passes = validation.pass_costs.size();
  std::string text = absl::StrFormat("median of %d pass%s, spread %.1f %%", passes,
                                     passes == 1 ? "" : "es", 100 * validation.rel_spread());
  if (validation.failed_passes > 0)
    absl::StrAppend(&text, ", ", validation.failed_passes, " failed");
  return text;
}

std::string DescribeFigure(const Record& record) {
  if (!record.validated()) return "search figure, not validated";
  return absl::StrCat("validated (", DescribeValidation(*record.validation), ")");
}

}  // namespace tunefleet

#include "tracker/validation.h"

#include "proto_convert/measure_result.h"
#include "proto_convert/run_request.h"

namespace tunefleet {

int ValidateTopK(const proto::JobSpec& spec) {
  return spec.has_validate_top_k() ? spec.validate_top_k() : kDefaultValidateTopK;
}

int ValidationPasses(const proto::JobSpec& spec) {
  return spec.has_validation_passes() ? spec.validation_passes() : kDefaultValidationPasses;
}

proto::MeasureOptions MeasureOptionsOf(const Job& job, const Trial& trial) {
  const proto::MeasureOptions& search = job.stored.spec.measure();
  if (trial.validates < 0) return search;
  return ToProto(ValidationMeasureOptions(ResolveMeasureOptions(search)));
}

std::vector<Trial> PlanValidation(const Job& job, int64_t first_id, double now) {
  std::vector<Trial> planned;
  const int k = ValidateTopK(job.stored.spec);
  if (k <= 0) return planned;
  const int passes = ValidationPasses(job.stored.spec);
  for (int32_t task = 0; task < static_cast<int32_t>(job.tasks.size()); ++task) {
    std::vector<const Trial*> searched;
    std::vector<double> costs;
    for (const auto& [id, trial] : job.trials) {
      if (trial.task_index != task || trial.validates >= 0 || !trial.done) continue;
      const MeasureResult measured = ToMeasureResult(trial.result);
      searched.push_back(&trial);
      costs.push_back(measured.ok() ? measured.MeanCost() : 0);
    }
    const std::vector<int> top = TopKByCost(costs, k);
    for (const auto& [candidate, pass] : ValidationOrder(static_cast<int>(top.size()), passes)) {
      const Trial& searched_trial = *searched[top[candidate]];
      Trial t;
      t.id = first_id++;
      t.task_index = task;
      t.validates = searched_trial.id;
      t.validation_pass = pass;
      t.config_json = searched_trial.config_json;
      t.config_index = searched_trial.config_index;
      t.queued_at = now;
      planned.push_back(std::move(t));
    }
  }
  return planned;
}

ValidationOutcome SummarizeValidation(const Job& job) {
  ValidationOutcome outcome;
  for (const auto& [id, trial] : job.trials) {  // id order: each trial's passes in order
    if (trial.validates < 0 || !trial.done) continue;
    outcome.of_trial[trial.validates].Add(ToMeasureResult(trial.result));
  }
  outcome.winner.assign(job.tasks.size(), -1);
  for (const auto& [searched, validation] : outcome.of_trial) {
    if (!validation.ok()) continue;
    int64_t& winner = outcome.winner[job.trials.at(searched).task_index];
    if (winner < 0 || validation.cost_s() < outcome.of_trial.at(winner).cost_s()) {
      winner = searched;
    }
  }
  return outcome;
}

void ApplyValidation(Job& job, const ValidationOutcome& outcome) {
  for (const auto& [searched, validation] : outcome.of_trial) {
    job.trials.at(searched).validation = validation;
  }
  for (size_t task = 0; task < job.tasks.size(); ++task) {
    JobTask& t = job.tasks[task];
    t.validated_trial = outcome.winner[task];
    if (t.validated_trial >= 0) t.validated = outcome.of_trial.at(t.validated_trial);
  }
  job.validated = true;
}

}  // namespace tunefleet

// Validated winners in the tracker (issue 18; the method is
// tuner_core/measure/validation.h). Once a job's search is over, the
// tracker measures each task's top `validate_top_k` successful search
// trials again, `validation_passes` times each, as validation measurements:
// trials of their own (Trial::validates names the search trial), built and
// measured like any other but never shown to the tuner, measured in a
// fresh runner child (MeasureRequest.fresh_runner) with the validation
// measure options, in the interleaved order of ValidationOrder. When all
// are done, each candidate's passes go into its search trial's record line
// ("validation") and each task's best becomes the candidate with the
// lowest validated cost; then the job ends.
//
// Pure functions over a Job; TrialLifecycle stores and applies them.
#ifndef TUNEFLEET_TRACKER_VALIDATION_H_
#define TUNEFLEET_TRACKER_VALIDATION_H_

#include <cstdint>
#include <map>
#include <vector>

#include "proto/fleet.pb.h"
#include "tracker/job_table.h"
#include "tuner_core/measure/validation.h"

namespace tunefleet {

// The spec's values; the defaults for a spec stored before they existed.
int ValidateTopK(const proto::JobSpec& spec);
int ValidationPasses(const proto::JobSpec& spec);

// The measure options a trial of `job` is measured with: the spec's for a
// search trial, ValidationMeasureOptions of them for a validation.
proto::MeasureOptions MeasureOptionsOf(const Job& job, const Trial& trial);

// The validation measurements of `job` (its search over): for each task in
// order, its top-k successful search trials by mean cost, each
// ValidationPasses times in ValidationOrder; ids from `first_id` on, queued
// at `now`. Empty when validation is off or no search trial succeeded.
std::vector<Trial> PlanValidation(const Job& job, int64_t first_id, double now);

// What the done validation measurements of `job` say: each validated
// search trial's passes (by search trial id), and per task the search
// trial with the lowest validated cost (-1 for a task none of whose
// candidates has a successful pass).
struct ValidationOutcome {
  std::map<int64_t, Validation> of_trial;
  std::vector<int64_t> winner;  // per task
};
ValidationOutcome SummarizeValidation(const Job& job);
// Puts `outcome` into `job`: each trial's validation, each task's winner,
// and marks the job validated.
void ApplyValidation(Job& job, const ValidationOutcome& outcome);

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_VALIDATION_H_

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
// One truth per key: when the key has several agents, the passes of one
// candidate are spread over them (ValidationMayGoTo: a pass goes to an
// agent that measured none of the candidate's other passes while the key
// has one that may measure), so each winner is confirmed on a second agent
// before it is reported; ConfirmationOf says whether the agents agree
// within the noise, and a disagreement is reported on the task and the job.
//
// Pure functions over a Job; TrialLifecycle stores and applies them.
#ifndef TUNEFLEET_TRACKER_VALIDATION_H_
#define TUNEFLEET_TRACKER_VALIDATION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
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
// One truth per key: whether a task's validated winner holds on every
// agent of the key that measured it. The validation passes of one
// candidate are spread over the key's agents (ValidationMayGoTo); here they
// are grouped by the agent that measured them (TrialResult.agent).
struct Confirmation {
  // Per agent that measured successful passes: its name and the median of
  // its passes' costs, in name order.
  std::vector<std::pair<std::string, double>> agent_costs;
  double apart = 0;      // slowest / fastest agent's median - 1 (0 with fewer than two)
  double tolerance = 0;  // the noise bound `apart` is judged against
  bool confirmed() const { return agent_costs.size() >= 2 && apart <= tolerance; }
  bool disagree() const { return agent_costs.size() >= 2 && apart > tolerance; }
  // "confirmed on 2 agents: ...", "agents disagree: ...", or "not confirmed:
  // every pass ran on agent-0".
  std::string Describe() const;
};

// The smallest disagreement counted as one: agents of a key are the same
// kind of device, and 5 % is what repeated validations of one winner on
// one quiet agent stay within.
inline constexpr double kMinConfirmationTolerance = 0.05;

// The confirmation of search trial `searched`'s validation passes in `job`:
// tolerance is the larger of kMinConfirmationTolerance and twice the
// largest spread ((max - min) / median) among one agent's own passes.
Confirmation ConfirmationOf(const Job& job, int64_t searched);

// Per candidate (search trial id), the agents that measured one of its
// validation passes or are measuring one now: what ValidationMayGoTo
// decides by, computed once per look at a job's queue.
using ValidationAgents = std::map<int64_t, std::set<std::string>>;
ValidationAgents ValidationAgentsOf(const Job& job);

// Whether queued trial `trial` may be measured by agent `agent_name` now
// (`agents`: ValidationAgentsOf its job): a validation pass of a candidate
// goes to an agent that measured none of that candidate's passes while the
// key has such an agent that may measure (`another_agent(used)`: whether
// one of the key's agents that are not quarantined has a name not in
// `used`; asked only when `agent_name` measured the candidate already, so a
// fleet of thousands is not listed per look); search trials go anywhere.
using AnotherAgentFn = std::function<bool(const std::set<std::string>& used)>;
bool ValidationMayGoTo(const Trial& trial, const std::string& agent_name,
                       const ValidationAgents& agents, const AnotherAgentFn& another_agent);

// Puts `outcome` into `job`: each trial's validation, each task's winner
// and its confirmation, and marks the job validated.
void ApplyValidation(Job& job, const ValidationOutcome& outcome);

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_VALIDATION_H_

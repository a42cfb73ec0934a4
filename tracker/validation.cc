#include "tracker/validation.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/median.h"
#include "proto_convert/measure_result.h"
#include "proto_convert/run_request.h"

namespace tunefleet {
namespace {

// The agent that measured (done) or is measuring validation trial `t`; ""
// when neither.
std::string AgentOf(const Trial& t) {
  if (t.done) return t.result.agent();
  if (t.state == TrialState::kMeasuring) return t.measuring_agent;
  return "";
}

// Calls `visit` for every validation trial of `job` (they come after every
// search trial: PlanValidation numbers them from the last id on).
template <typename Visit>
void ForEachValidation(const Job& job, Visit visit) {
  for (auto it = job.trials.rbegin(); it != job.trials.rend() && it->second.validates >= 0; ++it) {
    visit(it->second);
  }
}

}  // namespace

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

std::string Confirmation::Describe() const {
  if (agent_costs.empty()) return "not confirmed: no validation pass succeeded";
  if (agent_costs.size() == 1) {
    return absl::StrCat("not confirmed: every pass ran on ", agent_costs[0].first,
                        " (no other agent of the key could measure it)");
  }
  std::vector<std::string> figures;
  for (const auto& [agent, cost] : agent_costs) {
    figures.push_back(absl::StrFormat("%s %.4g ms", agent, cost * 1e3));
  }
  if (confirmed()) {
    return absl::StrFormat("confirmed on %d agents (%s): %.1f %% apart, within %.1f %%",
                           static_cast<int>(agent_costs.size()), absl::StrJoin(figures, ", "),
                           100 * apart, 100 * tolerance);
  }
  return absl::StrFormat("agents disagree (%s): %.1f %% apart, beyond the %.1f %% noise bound",
                         absl::StrJoin(figures, ", "), 100 * apart, 100 * tolerance);
}

Confirmation ConfirmationOf(const Job& job, int64_t searched) {
  std::map<std::string, std::vector<double>> by_agent;
  ForEachValidation(job, [&](const Trial& t) {
    if (t.validates != searched || !t.done) return;
    const MeasureResult measured = ToMeasureResult(t.result);
    if (measured.ok()) by_agent[t.result.agent()].push_back(measured.MeanCost());
  });
  Confirmation c;
  c.tolerance = kMinConfirmationTolerance;
  double fastest = 0, slowest = 0;
  for (const auto& [agent, costs] : by_agent) {
    const double median = Median(costs);
    c.agent_costs.emplace_back(agent, median);
    fastest = fastest == 0 ? median : std::min(fastest, median);
    slowest = std::max(slowest, median);
    if (costs.size() >= 2 && median > 0) {
      const auto [low, high] = std::minmax_element(costs.begin(), costs.end());
      c.tolerance = std::max(c.tolerance, 2 * (*high - *low) / median);
    }
  }
  if (c.agent_costs.size() >= 2 && fastest > 0) c.apart = slowest / fastest - 1;
  return c;
}

ValidationAgents ValidationAgentsOf(const Job& job) {
  ValidationAgents agents;
  ForEachValidation(job, [&](const Trial& t) {
    if (std::string agent = AgentOf(t); !agent.empty()) agents[t.validates].insert(agent);
  });
  return agents;
}

bool ValidationMayGoTo(const Trial& trial, const std::string& agent_name,
                       const ValidationAgents& agents, const AnotherAgentFn& another_agent) {
  if (trial.validates < 0) return true;
  // The agents with a pass of this candidate (a queued trial is none of
  // them: it has no agent yet).
  auto of_candidate = agents.find(trial.validates);
  if (of_candidate == agents.end()) return true;
  const std::set<std::string>& used = of_candidate->second;
  if (used.count(agent_name) == 0) return true;
  // This agent measured the candidate already: leave the pass to an agent
  // of the key that has not, when there is one (it takes it when free).
  return !another_agent(used);
}

void ApplyValidation(Job& job, const ValidationOutcome& outcome) {
  for (const auto& [searched, validation] : outcome.of_trial) {
    job.trials.at(searched).validation = validation;
  }
  for (size_t task = 0; task < job.tasks.size(); ++task) {
    JobTask& t = job.tasks[task];
    t.validated_trial = outcome.winner[task];
    if (t.validated_trial >= 0) {
      t.validated = outcome.of_trial.at(t.validated_trial);
      const Confirmation confirmation = ConfirmationOf(job, t.validated_trial);
      t.confirmation = confirmation.Describe();
      t.agents_disagree = confirmation.disagree();
    }
  }
  job.validated = true;
}

}  // namespace tunefleet

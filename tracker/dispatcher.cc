#include "tracker/dispatcher.h"

#include <algorithm>
#include <deque>
#include <list>
#include <map>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "common/logging.h"
#include "proto_convert/run_request.h"
#include "target/target_string.h"
#include "tracker/validation.h"

namespace tunefleet {
namespace {

constexpr size_t kDispatchRing = 10000;

}  // namespace

void Dispatcher::Enroll(Job& job) {
  job.build_pass = virtual_build_pass_;
  job.measure_pass = virtual_measure_pass_[job.stored.spec.device_key()];
}

void Dispatcher::MarkAgentFree(Worker& agent) {
  if (agent.free_listed || !agent.leases.empty() || agent.calibrating || agent.calibration_wanted ||
      !agent.quarantine.empty()) {
    return;
  }
  agent.free_listed = true;
  FreeAgents& free = free_agents_[agent.registration.device_key()];
  free.at[agent.id] = free.order.insert(free.order.end(), agent.id);
}

void Dispatcher::Forget(const Worker& worker) {
  if (!worker.free_listed) return;
  auto key = free_agents_.find(worker.registration.device_key());
  if (key == free_agents_.end()) return;
  FreeAgents& free = key->second;
  if (auto at = free.at.find(worker.id); at != free.at.end()) {
    free.order.erase(at->second);
    free.at.erase(at);
  }
}

void Dispatcher::DispatchAll(double since) {
  AssignJobs();
  // Measurements first: with isolation, a host that just finished a build
  // may be free to measure now, and waiting measurements hold back new
  // builds there.
  for (const std::string& key : KeysWaiting()) DispatchMeasures(key, since);
  DispatchBuilds(since);
}

void Dispatcher::ResendWithArtifact(Worker& agent, Job& job, Trial& trial) {
  agent.artifacts_sent.erase(trial.artifact_hash);
  SendMeasure(agent, job, trial, /*with_bytes=*/true);
}

// ---------------------------------------------------------------- jobs to tuners

void Dispatcher::AssignJobs() {
  for (const std::string& id : jobs_->submission_order()) {
    Job& job = *jobs_->Find(id);
    if (job.finished() || !job.tuner_worker.empty() || !job.loaded()) continue;
    Worker* best = nullptr;
    for (const std::string& tuner_id : workers_->tuners()) {
      Worker& tuner = *workers_->Find(tuner_id);
      if (tuner.busy_units() >= tuner.capacity()) continue;
      if (best == nullptr || tuner.jobs.size() < best->jobs.size()) best = &tuner;
    }
    if (best == nullptr) return;
    job.tuner_worker = best->id;
    best->jobs.insert(id);
    if (!lifecycle_->Start(job).ok()) {
      // The store refused RUNNING: nothing is acknowledged, the job says
      // why, and the next tick tries again.
      job.tuner_worker.clear();
      best->jobs.erase(id);
      return;
    }
    TF_LOG(INFO) << "job " << id << " assigned to tuner " << best->id << " \""
                 << best->registration.name() << "\" (" << job.done << " trials done, "
                 << job.in_flight() << " in flight)";
    SendAssignment(*best, job);
  }
}

void Dispatcher::SendAssignment(Worker& tuner, Job& job) {
  proto::TrackerMessage m;
  proto::JobAssignment* a = m.mutable_assignment();
  a->set_job_id(job.stored.job_id);
  *a->mutable_spec() = job.stored.spec;
  for (const auto& [id, t] : job.trials) {
    if (t.validates >= 0) continue;  // the tracker's, not the search's
    proto::KnownTrial* k = a->add_trials();
    k->set_trial_id(id);
    k->set_config_json(t.config_json);
    k->set_config_index(t.config_index);
    k->set_task_index(t.task_index);
    k->set_done(t.done);
    if (t.done) *k->mutable_result() = t.result;
  }
  a->set_suggested_window(workers_->SuggestedWindow(job.stored.spec, options_->max_window));
  tuner.outbox->Send(std::move(m));
}

// ---------------------------------------------------------------- builds

bool Dispatcher::MayBuild(const Job& job) const {
  // "-mcpu=native" means the agents' CPU: wait until one of the key says it.
  for (const proto::JobTask& t : job.stored.spec.tasks()) {
    if (absl::StrContains(t.task().target(), "-mcpu=native")) {
      return workers_->AgentsOfKey(job.stored.spec.device_key()) > 0;
    }
  }
  return true;
}

void Dispatcher::DispatchBuilds(double since) {
  while (true) {
    // The builder with the most free slots.
    Worker* builder = nullptr;
    int best_free = 0;
    for (const std::string& id : workers_->builders()) {
      Worker& w = *workers_->Find(id);
      if (w.isolating && !HostMayBuild(w.host)) continue;
      const int free = w.capacity() - w.busy_units();
      if (free > best_free) {
        best_free = free;
        builder = &w;
      }
    }
    if (builder == nullptr) return;
    const double now = clock_->NowSeconds();
    Job* pick = nullptr;
    for (const auto& [id, job] : jobs_->by_id()) {
      if (job->finished() || job->to_build.empty() || !MayBuild(*job)) continue;
      if (!quotas_.BuildHold(*job, now).empty()) continue;  // its owner's hour is used up
      if (pick == nullptr || job->build_pass < pick->build_pass) pick = job.get();
    }
    if (pick == nullptr) return;
    Job& job = *pick;
    virtual_build_pass_ = std::max(virtual_build_pass_, job.build_pass);
    job.build_pass += job.stride();
    quotas_.RecordBuild(job.stored.spec.owner(), now);
    Trial& trial = job.trials.at(job.to_build.front());
    job.to_build.pop_front();
    const double deadline =
        clock_->NowSeconds() + job.stored.spec.build_timeout_s() + options_->build_lease_grace_s;
    const std::string lease_id = leases_->Grant(job, trial, *builder, Stage::kBuild, deadline);
    proto::TrackerMessage m;
    proto::BuildRequest* b = m.mutable_build();
    b->set_lease_id(lease_id);
    b->set_job_id(job.stored.job_id);
    b->set_trial_id(trial.id);
    *b->mutable_task() = job.stored.spec.tasks(trial.task_index).task();
    // "native" is the measuring device's CPU, not the builder's.
    trial.target =
        WithNativeCpu(b->task().target(), workers_->LlvmCpuOfKey(job.stored.spec.device_key()));
    b->mutable_task()->set_target(trial.target);
    b->set_config_json(trial.config_json);
    b->set_timeout_s(job.stored.spec.build_timeout_s());
    builder->outbox->Send(std::move(m));
    RecordDispatch(Stage::kBuild, since);
  }
}

// ---------------------------------------------------------------- measurements

void Dispatcher::DispatchMeasures(const std::string& device_key, double since) {
  auto free_it = free_agents_.find(device_key);
  if (free_it == free_agents_.end()) return;
  std::list<std::string>& free = free_it->second.order;
  // Whether one of the key's agents that may measure (not quarantined) has
  // not measured a candidate (`used`): a validation pass waits for one
  // (search trials go anywhere). Stops at the first such agent.
  auto another_agent = [&](const std::set<std::string>& used) {
    for (const std::string& id : workers_->AgentIdsOfKey(device_key)) {
      const Worker& w = *workers_->Find(id);
      if (w.quarantine.empty() && used.count(w.registration.name()) == 0) return true;
    }
    return false;
  };
  bool validating = false;
  // Whether any job of the key has a trial to measure: with none, the free
  // agents (thousands in a large fleet) are not walked.
  auto pending = [&] {
    for (const auto& [id, job] : jobs_->by_id()) {
      if (!job->finished() && !job->to_measure.empty() &&
          job->stored.spec.device_key() == device_key) {
        return true;
      }
    }
    return false;
  };
  if (!pending()) return;
  for (const auto& [id, job] : jobs_->by_id()) {
    validating |=
        !job->finished() && job->validations > 0 && job->stored.spec.device_key() == device_key;
  }
  const int agents_of_key = workers_->AgentsOfKey(device_key);
  bool dispatched = true;
  while (dispatched && pending()) {
    dispatched = false;
    // The first free agent whose host is not building and for which some
    // job has a trial: the job whose turn it is (stride), its first trial
    // that agent may take.
    // Per validating job, who measured its candidates: one pass over its
    // validation trials per dispatch, not one per queued trial.
    std::map<const Job*, ValidationAgents> validation_agents;
    auto agents_of = [&](const Job& job) -> const ValidationAgents& {
      auto [it, inserted] = validation_agents.try_emplace(&job);
      if (inserted && validating) it->second = ValidationAgentsOf(job);
      return it->second;
    };
    for (auto agent_it = free.begin(); agent_it != free.end(); ++agent_it) {
      Worker& agent = *workers_->Find(*agent_it);
      if (agent.isolating && !HostMayMeasure(agent)) continue;
      Job* pick = nullptr;
      std::deque<int64_t>::iterator pick_trial;
      for (const auto& [id, job] : jobs_->by_id()) {
        if (job->finished() || job->to_measure.empty() ||
            job->stored.spec.device_key() != device_key ||
            (pick != nullptr && job->measure_pass >= pick->measure_pass)) {
          continue;
        }
        // Its owner measures on as many of the key's agents as it may.
        if (job->stored.spec.owner_quota().max_agent_share() > 0 &&
            !UserQuotas::MeasureHold(*jobs_, *job, agents_of_key).empty()) {
          continue;
        }
        auto trial_it =
            std::find_if(job->to_measure.begin(), job->to_measure.end(), [&](int64_t trial_id) {
              return ValidationMayGoTo(job->trials.at(trial_id), agent.registration.name(),
                                       agents_of(*job), another_agent);
            });
        if (trial_it == job->to_measure.end()) continue;
        pick = job.get();
        pick_trial = trial_it;
      }
      if (pick == nullptr) continue;
      Job& job = *pick;
      double& virtual_pass = virtual_measure_pass_[device_key];
      virtual_pass = std::max(virtual_pass, job.measure_pass);
      job.measure_pass += job.stride();
      free_it->second.at.erase(*agent_it);
      free.erase(agent_it);
      agent.free_listed = false;
      Trial& trial = job.trials.at(*pick_trial);
      job.to_measure.erase(pick_trial);
      trial.measuring_agent = agent.registration.name();
      // The agent's own deadline is timeout + cooldown (slept once per trial).
      const MeasureOptions measure = ResolveMeasureOptions(MeasureOptionsOf(job, trial));
      const double deadline = clock_->NowSeconds() + measure.timeout_s +
                              measure.cooldown_interval_s + options_->measure_lease_grace_s;
      leases_->Grant(job, trial, agent, Stage::kMeasure, deadline);
      SendMeasure(agent, job, trial, !agent.artifacts_sent.contains(trial.artifact_hash));
      RecordDispatch(Stage::kMeasure, since);
      dispatched = true;
      break;  // `free` changed: start over
    }
  }
}

void Dispatcher::SendMeasure(Worker& agent, Job& job, Trial& trial, bool with_bytes) {
  proto::TrackerMessage m;
  proto::MeasureRequest* request = m.mutable_measure();
  request->set_lease_id(trial.lease_id);
  request->set_job_id(job.stored.job_id);
  request->set_trial_id(trial.id);
  proto::RunRequest* run = request->mutable_run();
  const Workload& workload = job.tasks[trial.task_index].task->workload();
  run->set_workload_name(workload.name());
  run->set_workload_args_json(workload.args().dump());
  if (with_bytes) {
    run->set_shared_object(*trial.shared_object);
    request->set_artifact_signature(trial.artifact_signature);
    request->set_artifact_signer(trial.artifact_signer);
    agent.artifacts_sent.insert(trial.artifact_hash);
  }
  run->set_entry_name(trial.entry_name);
  run->set_artifact_hash(trial.artifact_hash);
  *run->mutable_options() = MeasureOptionsOf(job, trial);
  request->set_fresh_runner(trial.validates >= 0);
  agent.outbox->Send(std::move(m));
}

// ---------------------------------------------------------------- isolation

bool Dispatcher::HostMayMeasure(const Worker& agent) const {
  if (leases_->BuildsOn(agent.host) > 0 || HostCalibrates(agent.host)) return false;
  // CPU agents of one host share its cores (and caches, and memory
  // bandwidth): one measures at a time. An agent with a GPU times its own
  // device.
  if (!agent.registration.device().gpu_name().empty()) return true;
  for (const std::string& other_id : workers_->IsolatingAgentsOn(agent.host)) {
    const Worker& other = *workers_->all().at(other_id);
    if (other_id != agent.id && other.registration.device().gpu_name().empty() &&
        !other.leases.empty()) {
      return false;
    }
  }
  return true;
}

bool Dispatcher::HostCalibrates(const std::string& host) const {
  for (const std::string& agent_id : workers_->IsolatingAgentsOn(host)) {
    const Worker& agent = *workers_->all().at(agent_id);
    if (agent.calibrating || agent.calibration_wanted) return true;
  }
  return false;
}

bool Dispatcher::HostMayBuild(const std::string& host) const {
  if (leases_->MeasuresOn(host) > 0 || HostCalibrates(host)) return false;
  // Measurements waiting for a free agent of this host go first.
  const std::set<std::string>& agents = workers_->IsolatingAgentsOn(host);
  if (agents.empty()) return true;
  const std::vector<std::string> waiting = KeysWaiting();
  for (const std::string& agent_id : agents) {
    const Worker& agent = *workers_->all().at(agent_id);
    if (agent.free_listed && std::find(waiting.begin(), waiting.end(),
                                       agent.registration.device_key()) != waiting.end()) {
      return false;
    }
  }
  return true;
}

std::vector<std::string> Dispatcher::KeysWaiting() const {
  std::set<std::string> keys;
  for (const auto& [id, job] : jobs_->by_id()) {
    if (!job->finished() && !job->to_measure.empty()) keys.insert(job->stored.spec.device_key());
  }
  return {keys.begin(), keys.end()};
}

void Dispatcher::RecordDispatch(Stage stage, double since) {
  const double latency = std::max(0.0, clock_->NowSeconds() - since);
  if (metrics_ != nullptr) {
    metrics_->ObserveDispatch(stage == Stage::kBuild ? QueueStage::kBuild : QueueStage::kMeasure,
                              latency);
  }
  if (stage != Stage::kMeasure) return;  // the ring (QueueSummary) is for measurements
  if (dispatch_ring_.size() < kDispatchRing) {
    dispatch_ring_.push_back(latency);
  } else {
    dispatch_ring_[dispatch_next_] = latency;
    dispatch_next_ = (dispatch_next_ + 1) % kDispatchRing;
  }
}

// ---------------------------------------------------------------- summary

std::vector<proto::UserSummary> Dispatcher::UserSummaries(double now) const {
  std::map<std::string, int> agents_by_key;
  for (const auto& [id, w] : workers_->all()) {
    if (w->role() == proto::AGENT) ++agents_by_key[w->registration.device_key()];
  }
  return quotas_.Summaries(*jobs_, agents_by_key, now);
}

proto::QueueSummaryResponse Dispatcher::QueueSummary(double now) const {
  proto::QueueSummaryResponse response;
  std::map<std::string, proto::KeySummary> keys;
  for (const auto& [id, w] : workers_->all()) {
    if (w->role() == proto::AGENT) {
      proto::KeySummary& k = keys[w->registration.device_key()];
      k.set_total(k.total() + 1);
      if (w->leases.empty())
        k.set_free(k.free() + 1);
      else
        k.set_busy(k.busy() + 1);
    } else if (w->role() == proto::BUILDER) {
      response.set_builders(response.builders() + 1);
      response.set_build_slots_free(response.build_slots_free() +
                                    std::max(0, w->capacity() - w->busy_units()));
    } else if (w->role() == proto::TUNER) {
      response.set_tuners(response.tuners() + 1);
    }
  }
  for (const std::string& id : jobs_->submission_order()) {
    const Job& job = *jobs_->by_id().at(id);
    if (job.finished()) continue;
    proto::KeySummary& k = keys[job.stored.spec.device_key()];
    k.set_pending(k.pending() + static_cast<int64_t>(job.to_measure.size()));
    if (!job.to_measure.empty()) {
      const double age = now - job.trials.at(job.to_measure.front()).queued_at;
      k.set_oldest_pending_s(std::max(k.oldest_pending_s(), age));
    }
    response.set_builds_pending(response.builds_pending() +
                                static_cast<int64_t>(job.to_build.size()));
    proto::JobQueueSummary* j = response.add_jobs();
    j->set_job_id(id);
    j->set_device_key(job.stored.spec.device_key());
    j->set_to_build(static_cast<int64_t>(job.to_build.size()));
    j->set_building(job.building);
    j->set_to_measure(static_cast<int64_t>(job.to_measure.size()));
    j->set_measuring(job.measuring);
    j->set_done(job.done);
    j->set_n_trial(job.stored.spec.n_trial());
  }
  for (auto& [key, k] : keys) {
    k.set_device_key(key);
    *response.add_keys() = k;
  }
  for (proto::UserSummary& user : UserSummaries(now)) *response.add_users() = std::move(user);
  if (!dispatch_ring_.empty()) {
    std::vector<double> v = dispatch_ring_;
    auto quantile = [&v](double q) {
      size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
      return v[i];
    };
    response.set_dispatch_p50_s(quantile(0.50));
    response.set_dispatch_p99_s(quantile(0.99));
    response.set_dispatch_samples(static_cast<int64_t>(v.size()));
  }
  return response;
}

}  // namespace tunefleet

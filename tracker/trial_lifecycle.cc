#include "tracker/trial_lifecycle.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "common/text_cap.h"
#include "proto_convert/measure_result.h"
#include "proto_convert/run_request.h"
#include "proto_convert/task_spec.h"
#include "tracker/validation.h"

namespace tunefleet {

// ---------------------------------------------------------------- jobs

absl::StatusOr<Job*> TrialLifecycle::Submit(proto::JobSpec spec, std::vector<JobTask> tasks) {
  auto job = std::make_unique<Job>();
  job->stored.sequence = jobs_->TakeSequence();
  job->stored.job_id = absl::StrCat("job-", job->stored.sequence);
  job->stored.spec = std::move(spec);
  job->stored.state = proto::QUEUED;
  job->stored.created_at = clock_->WallSeconds();
  job->tasks = std::move(tasks);
  TF_RETURN_IF_ERROR(writer_->PutJob(job->stored));
  const proto::JobSpec& s = job->stored.spec;
  TF_LOG(INFO) << "job " << job->stored.job_id
               << " submitted: " << (s.model().empty() ? job->tasks[0].name : s.model()) << " ("
               << job->tasks.size() << " task" << (job->tasks.size() == 1 ? "" : "s") << ") on key "
               << s.device_key() << ", " << s.n_trial() << " trials, tuner " << s.tuner();
  return &jobs_->Add(std::move(job));
}

absl::Status TrialLifecycle::Start(Job& job) {
  if (job.stored.state != proto::QUEUED) return absl::OkStatus();
  StoredJob next = job.stored;
  next.state = proto::RUNNING;
  if (next.started_at == 0) next.started_at = clock_->WallSeconds();
  absl::Status stored = writer_->PutJob(next);
  if (!stored.ok()) {
    TF_LOG(ERROR) << stored << "; job " << job.stored.job_id
                  << " stays queued, retried on the next tick";
    job.store_error =
        absl::StrCat(stored.message(), "; the job stays queued until the store takes it");
    return stored;
  }
  job.stored = std::move(next);
  Publish(job, nullptr);
  return absl::OkStatus();
}

absl::Status TrialLifecycle::End(Job& job, proto::JobState state, const std::string& message) {
  StoredJob next = job.stored;
  next.state = state;
  next.message = message;
  next.finished_at = clock_->WallSeconds();
  TF_RETURN_IF_ERROR(writer_->PutJob(next));
  job.stored = std::move(next);
  job.store_error.clear();
  job.unstored_trials.clear();
  TF_LOG(INFO) << "job " << job.stored.job_id << " " << proto::JobState_Name(state) << ": "
               << message;
  // Queued work is dropped; leases in flight end when their results come
  // (ignored) or their worker is lost.
  for (int64_t id : job.to_build) job.trials.at(id).state = TrialState::kDone;
  for (int64_t id : job.to_measure) job.trials.at(id).shared_object.reset();
  job.to_build.clear();
  job.to_measure.clear();
  if (Worker* tuner = workers_->Find(job.tuner_worker)) {
    tuner->jobs.erase(job.stored.job_id);
    proto::TrackerMessage m;
    m.mutable_released()->set_job_id(job.stored.job_id);
    m.mutable_released()->set_reason(message);
    tuner->outbox->Send(std::move(m));
  }
  job.tuner_worker.clear();
  Publish(job, nullptr);
  jobs_->EndWatches(job);
  return absl::OkStatus();
}

void TrialLifecycle::MaybeFinish(Job& job) {
  if (job.finished()) return;
  const int64_t n = job.stored.spec.n_trial();
  std::string message;
  if (job.done >= n) {
    message = absl::StrCat("all ", n, " trials done");
  } else if ((job.search_finished || job.validations > 0) && job.in_flight() == 0) {
    // (Validation starts only once the search is over, also before a restart.)
    message = absl::StrCat("search ended after ", job.done, " of ", n, " trials",
                           job.finish_reason.empty() ? "" : ": ", job.finish_reason);
  } else {
    return;
  }
  if (!job.validated) {
    if (job.validations == 0) {
      if (StartValidation(job)) return;  // measuring (or retried on the next tick)
    } else if (job.validations_done < job.validations || !FinishValidation(job)) {
      return;
    }
  }
  if (job.validations > 0) {
    absl::StrAppend(&message, "; best validated by ", job.validations,
                    " re-measurements of the top ", ValidateTopK(job.stored.spec), " per task");
    // One truth per key: a winner whose agents disagree is reported on the job.
    for (size_t i = 0; i < job.tasks.size(); ++i) {
      if (!job.tasks[i].agents_disagree) continue;
      absl::StrAppend(&message, "; task ", i, ": ", job.tasks[i].confirmation);
    }
  }
  // A job none of whose trials worked did not succeed: say why (the first
  // error is as good a reason as any, they usually share one).
  proto::JobState state = proto::SUCCEEDED;
  int untuned = 0;
  for (const JobTask& t : job.tasks) untuned += t.best.has_best() ? 0 : 1;
  if (job.done > 0 && untuned == static_cast<int>(job.tasks.size())) {
    state = proto::FAILED;
    std::string first_error;
    for (const auto& [id, trial] : job.trials) {
      if (trial.done && trial.result.error_no() != 0) {
        first_error =
            absl::StrCat(MeasureErrorName(static_cast<MeasureErrorNo>(trial.result.error_no())),
                         ": ", trial.result.error_msg());
        break;
      }
    }
    message = absl::StrCat("every trial failed (", job.done, " of ", n,
                           " done; first: ", first_error.substr(0, 300), ")");
  } else if (untuned > 0) {
    absl::StrAppend(&message, "; ", untuned, " of ", job.tasks.size(),
                    " tasks have no working config");
  }
  absl::Status ended = End(job, state, message);
  if (!ended.ok()) {
    // Still running: RetryStoreWrites comes back here on the next tick.
    TF_LOG(ERROR) << ended << "; job " << job.stored.job_id
                  << " stays running, retried on the next tick";
    job.store_error = absl::StrCat(ended.message(), "; the job ends once the store takes it");
  }
}

// ---------------------------------------------------------------- trials

void TrialLifecycle::Propose(Job& job, Worker& tuner, const proto::ProposeTrials& propose,
                             double received_at) {
  if (job.finished()) return;
  proto::TrackerMessage reply;
  proto::TrialsAccepted* accepted = reply.mutable_accepted();
  accepted->set_job_id(job.stored.job_id);
  std::vector<Trial> created;
  absl::flat_hash_set<std::pair<int32_t, int64_t>> seen;  // (task, config index)
  for (const auto& [id, t] : job.trials) seen.insert({t.task_index, t.config_index});
  std::vector<int64_t> task_trials(job.tasks.size());
  for (size_t i = 0; i < job.tasks.size(); ++i) task_trials[i] = job.tasks[i].trials;
  const proto::JobSpec& spec = job.stored.spec;
  int64_t next_id = static_cast<int64_t>(job.trials.size());
  std::vector<int32_t> created_positions;
  for (int32_t position = 0; position < propose.configs_size(); ++position) {
    const proto::ProposedConfig& pc = propose.configs(position);
    auto reject = [&](std::string why) {
      accepted->add_rejected(std::move(why));
      accepted->add_rejected_positions(position);
    };
    if (job.validations > 0) {
      reject("the search is over: the job's winners are being validated");
      continue;
    }
    if (next_id >= spec.n_trial()) {
      reject(absl::StrCat("job already has all ", spec.n_trial(), " trials"));
      continue;
    }
    const int32_t ti = pc.task_index();
    if (ti < 0 || ti >= static_cast<int32_t>(job.tasks.size())) {
      reject(
          absl::StrCat("task_index ", ti, " is not a task of this job (", job.tasks.size(), ")"));
      continue;
    }
    if (spec.has_trials_per_task() && task_trials[ti] >= spec.trials_per_task()) {
      reject(absl::StrCat("task ", ti, " already has all ", spec.trials_per_task(), " trials"));
      continue;
    }
    absl::StatusOr<Config> config = job.tasks[ti].task->space().FromJsonString(pc.config_json());
    if (!config.ok()) {
      reject(absl::StrCat("config outside the space: ", config.status().message()));
      continue;
    }
    if (config->index() != pc.config_index()) {
      reject(absl::StrCat("config_index ", pc.config_index(), " does not match the config (index ",
                          config->index(), ")"));
      continue;
    }
    if (!seen.insert({ti, config->index()}).second) {
      reject(absl::StrCat("config ", config->index(), " of task ", ti,
                          " was already proposed in this job"));
      continue;
    }
    ++task_trials[ti];
    created_positions.push_back(position);
    Trial t;
    t.id = next_id++;
    t.task_index = ti;
    t.config_json = config->ToJson().dump();
    t.config_index = config->index();
    t.queued_at = received_at;
    created.push_back(std::move(t));
  }
  if (!created.empty()) {
    absl::Status stored = writer_->PutNewTrials(job, created);
    if (!stored.ok()) {
      // Nothing was acknowledged: the tuner sees these configs refused with
      // the store's reason and the job stays as it was.
      TF_LOG(ERROR) << stored;
      for (int32_t position : created_positions) {
        accepted->add_rejected(std::string(stored.message()));
        accepted->add_rejected_positions(position);
      }
      created.clear();
    }
  }
  for (Trial& t : created) {
    accepted->add_trial_ids(t.id);
    ++job.tasks[t.task_index].trials;
    job.to_build.push_back(t.id);
    job.trials.emplace(t.id, std::move(t));
  }
  if (accepted->rejected_size() > 0) {
    if (metrics_ != nullptr) metrics_->Rejected("config");
    TF_LOG(WARNING) << "job " << job.stored.job_id << ": refused " << accepted->rejected_size()
                    << " proposed config(s), first: " << accepted->rejected(0);
  }
  tuner.outbox->Send(std::move(reply));
  if (propose.finished() && !job.search_finished) {
    job.search_finished = true;
    job.finish_reason = propose.finish_reason();
    TF_LOG(INFO) << "job " << job.stored.job_id << ": the tuner ended the search ("
                 << job.finish_reason << ")";
  }
  MaybeFinish(job);
}

void TrialLifecycle::Built(Job& job, Trial& trial, const proto::BuildResult& result,
                           const Worker& builder, double received_at) {
  trial.build_seconds = result.build_seconds();
  trial.builder = builder.registration.name();
  std::string problem;
  if (result.error_no() != 0) {
    proto::TrialResult r =
        ErrorResult(static_cast<MeasureErrorNo>(result.error_no()), result.error_msg());
    r.set_build_seconds(result.build_seconds());
    r.set_all_cost(result.build_seconds());
    r.set_builder(trial.builder);
    Finish(job, trial, std::move(r));
    return;
  }
  if (result.shared_object().empty() || result.entry_name().empty() ||
      result.artifact_hash().empty()) {
    problem = "the builder returned success without an artifact, entry name or hash";
  } else if (static_cast<int64_t>(result.shared_object().size()) > options_->max_artifact_bytes) {
    problem = absl::StrCat("artifact of ", result.shared_object().size(),
                           " bytes exceeds the limit of ", options_->max_artifact_bytes);
  } else if (!options_->builder_keys.empty()) {
    // Checked here too, not only on the agent: a bad artifact fails its
    // trial at once, named, instead of travelling to a board to be refused.
    if (absl::Status signed_ok = options_->builder_keys.Verify(
            result.shared_object(), result.artifact_hash(), result.entry_name(), result.signature(),
            result.signer_key());
        !signed_ok.ok()) {
      problem = absl::StrCat("builder ", trial.builder, ": ", signed_ok.message());
      if (metrics_ != nullptr) metrics_->Rejected("artifact_signature");
      TF_LOG(WARNING) << "trial " << trial.id << " of job " << job.stored.job_id << ": " << problem;
    }
  }
  if (!problem.empty()) {
    proto::TrialResult r = ErrorResult(MeasureErrorNo::kCompileHost, problem);
    r.set_builder(trial.builder);
    Finish(job, trial, std::move(r));
    return;
  }
  trial.shared_object = std::make_shared<const std::string>(result.shared_object());
  trial.entry_name = result.entry_name();
  trial.artifact_hash = result.artifact_hash();
  trial.artifact_signature = result.signature();
  trial.artifact_signer = result.signer_key();
  trial.state = TrialState::kToMeasure;
  trial.queued_at = received_at;
  job.to_measure.push_back(trial.id);
}

void TrialLifecycle::Measured(Job& job, Trial& trial, const proto::MeasureResult& result,
                              const Worker& agent) {
  // The agent's answer under the fleet's one rule set (proto_convert):
  // unknown codes and successes without costs become UNKNOWN errors.
  // and, with the task's FLOPs, costs no device of this kind could reach.
  const double flops = job.tasks[trial.task_index].task->workload().flops();
  proto::TrialResult r =
      ToTrialResult(RejectInvalidCosts(ToMeasureResult(result.run(), clock_->WallSeconds()), flops,
                                       PlausiblePeakGflops(agent.registration.device())));
  r.set_build_seconds(trial.build_seconds);
  r.set_measure_seconds(result.measure_seconds());
  r.set_all_cost(trial.build_seconds + r.all_cost());
  r.set_builder(trial.builder);
  r.set_agent(agent.registration.name());
  Finish(job, trial, std::move(r));
}

void TrialLifecycle::Requeue(Job& job, Trial& trial, Stage lost_stage, const std::string& reason) {
  trial.lease_id.clear();
  trial.requeue_stage = lost_stage;
  absl::Status stored = writer_->PutAttempts(job, trial);
  if (!stored.ok()) {
    HoldForStore(job, trial, TrialState::kRequeueUnstored, stored);
    return;
  }
  Enqueue(job, trial, reason);
}

void TrialLifecycle::GiveUp(Job& job, Trial& trial, Stage lost_stage, const std::string& reason) {
  const bool building = lost_stage == Stage::kBuild;
  // Not the config's fault: an infrastructure outcome (UNKNOWN_ERROR, marked
  // as such) that tuners skip instead of learning the config is bad.
  proto::TrialResult r =
      ErrorResult(MeasureErrorNo::kUnknown,
                  absl::StrCat("infrastructure: gave up after ", trial.attempts, " attempts: the ",
                               building ? "builder" : "agent",
                               " holding this trial was lost each time (last: ", reason, ")"));
  r.set_infrastructure(true);
  r.set_build_seconds(trial.build_seconds);
  r.set_builder(trial.builder);
  Finish(job, trial, std::move(r));
}

void TrialLifecycle::FailJobsWithoutAgents() {
  const double now = clock_->NowSeconds();
  for (const auto& [id, job_ptr] : jobs_->by_id()) {
    Job& job = *job_ptr;
    const proto::JobSpec& spec = job.stored.spec;
    if (job.finished() || !spec.has_queue_timeout_s()) continue;
    if (workers_->AgentsOfKey(spec.device_key()) > 0) {
      job.no_agent_since = 0;
      continue;
    }
    if (job.no_agent_since == 0) job.no_agent_since = now;
    if (now - job.no_agent_since < spec.queue_timeout_s()) continue;
    absl::Status ended =
        End(job, proto::FAILED,
            absl::StrCat("no agent of key '", spec.device_key(), "' was connected for ",
                         spec.queue_timeout_s(), " s (queue_timeout_s)"));
    if (!ended.ok()) {
      TF_LOG(ERROR) << ended << "; job " << id << " retried on the next tick";
    }
  }
}

void TrialLifecycle::RetryStoreWrites() {
  for (const auto& [id, job_ptr] : jobs_->by_id()) {
    Job& job = *job_ptr;
    if (job.finished() || job.store_error.empty()) continue;
    job.store_error.clear();
    const std::set<int64_t> waiting = job.unstored_trials;
    for (int64_t trial_id : waiting) {
      Trial& trial = job.trials.at(trial_id);
      const bool result = trial.state == TrialState::kResultUnstored;
      absl::Status stored =
          result ? writer_->PutResult(job, trial) : writer_->PutAttempts(job, trial);
      if (!stored.ok()) {
        HoldForStore(job, trial, trial.state, stored);
        break;  // keep the order: later writes wait for this one
      }
      job.unstored_trials.erase(trial_id);
      TF_LOG(INFO) << "job " << job.stored.job_id << " trial " << trial_id
                   << ": the store took the " << (result ? "result" : "requeue")
                   << " it refused before";
      if (result) {
        Acknowledge(job, trial);
      } else {
        Enqueue(job, trial, "retried store write");
      }
      if (job.finished()) break;
    }
    if (job.unstored_trials.empty()) MaybeFinish(job);
  }
}

proto::JobStatus TrialLifecycle::StatusOf(const Job& job) const {
  proto::JobStatus status = tunefleet::StatusOf(job, workers_->NameOf(job.tuner_worker));
  // Waiting on agents that are not there is not progress: say so.
  const std::string& key = job.stored.spec.device_key();
  if (!job.finished() && status.message().empty() && workers_->AgentsOfKey(key) == 0) {
    status.set_message(absl::StrCat("waiting: no agent of key '", key,
                                    "' is connected; trials wait until one registers"));
  } else if (!job.finished() && status.message().empty()) {
    const std::string quarantine = workers_->QuarantineOfKey(key);
    if (!quarantine.empty()) {
      status.set_message(absl::StrCat("waiting: every agent of key '", key, "' is quarantined (",
                                      quarantine,
                                      "); trials wait until one passes its calibration"));
    }
  }
  return status;
}

// ---------------------------------------------------------------- private

void TrialLifecycle::Finish(Job& job, Trial& trial, proto::TrialResult result) {
  // A builder's or agent's message (a kernel can write its own) is stored,
  // streamed and exported at a bounded size.
  if (result.error_msg().size() > kMaxReportedMessageBytes) {
    result.set_error_msg(CapMessage(result.error_msg()));
  }
  trial.result = std::move(result);
  trial.shared_object.reset();
  trial.lease_id.clear();
  absl::Status stored = writer_->PutResult(job, trial);
  if (!stored.ok()) {
    HoldForStore(job, trial, TrialState::kResultUnstored, stored);
    return;
  }
  Acknowledge(job, trial);
}

void TrialLifecycle::Acknowledge(Job& job, Trial& trial) {
  trial.done = true;
  trial.state = TrialState::kDone;
  if (trial.validates >= 0) {  // the tuner never sees validations
    ++job.validations_done;
    Publish(job, &trial);
    MaybeFinish(job);
    return;
  }
  ++job.done;
  if (metrics_ != nullptr) metrics_->TrialFinished(trial.result.error_no());
  CountOutcome(job, trial);
  if (Worker* tuner = workers_->Find(job.tuner_worker)) {
    proto::TrackerMessage m;
    proto::TrialUpdate* u = m.mutable_trial_update();
    u->set_job_id(job.stored.job_id);
    u->set_trial_id(trial.id);
    u->set_config_json(trial.config_json);
    u->set_config_index(trial.config_index);
    u->set_task_index(trial.task_index);
    *u->mutable_result() = trial.result;
    u->set_suggested_window(workers_->SuggestedWindow(job.stored.spec, options_->max_window));
    tuner->outbox->Send(std::move(m));
  }
  Publish(job, &trial);
  MaybeFinish(job);
}

bool TrialLifecycle::StartValidation(Job& job) {
  const int64_t first_id = job.trials.empty() ? 0 : job.trials.rbegin()->first + 1;
  std::vector<Trial> planned = PlanValidation(job, first_id, clock_->NowSeconds());
  if (planned.empty()) return false;  // off, or nothing succeeded
  absl::Status stored = writer_->PutNewTrials(job, planned);
  if (!stored.ok()) {
    TF_LOG(ERROR) << stored << "; job " << job.stored.job_id
                  << " starts its validation on the next tick";
    job.store_error = absl::StrCat(stored.message(), "; validation starts once the store takes it");
    return true;
  }
  TF_LOG(INFO) << "job " << job.stored.job_id << ": search over; validating its winners with "
               << planned.size() << " re-measurements";
  job.validations = static_cast<int64_t>(planned.size());
  for (Trial& t : planned) {
    job.to_build.push_back(t.id);
    job.trials.emplace(t.id, std::move(t));
  }
  Publish(job, nullptr);
  return true;
}

bool TrialLifecycle::FinishValidation(Job& job) {
  const ValidationOutcome outcome = SummarizeValidation(job);
  std::vector<Trial> rewritten;
  for (const auto& [id, validation] : outcome.of_trial) {
    Trial copy = job.trials.at(id);
    copy.shared_object.reset();
    copy.validation = validation;
    rewritten.push_back(std::move(copy));
  }
  absl::Status stored = writer_->PutValidated(job, rewritten);
  if (!stored.ok()) {
    TF_LOG(ERROR) << stored << "; job " << job.stored.job_id
                  << " applies its validation on the next tick";
    job.store_error = absl::StrCat(stored.message(), "; the job ends once the store takes it");
    return false;
  }
  ApplyValidation(job, outcome);
  return true;
}

void TrialLifecycle::Enqueue(Job& job, Trial& trial, const std::string& reason) {
  TF_LOG(WARNING) << "job " << job.stored.job_id << " trial " << trial.id << " requeued for "
                  << StageName(trial.requeue_stage) << " (attempt " << trial.attempts + 1 << " of "
                  << job.stored.spec.max_attempts() << "): " << reason;
  trial.queued_at = clock_->NowSeconds();
  if (trial.requeue_stage == Stage::kMeasure && trial.shared_object != nullptr) {
    trial.state = TrialState::kToMeasure;
    job.to_measure.push_front(trial.id);
  } else {
    trial.state = TrialState::kToBuild;
    job.to_build.push_front(trial.id);
  }
}

void TrialLifecycle::HoldForStore(Job& job, Trial& trial, TrialState state,
                                  const absl::Status& why) {
  trial.state = state;
  job.unstored_trials.insert(trial.id);
  job.store_error = absl::StrCat(why.message(), "; held and retried every tick");
  TF_LOG(ERROR) << why << "; not acknowledged, retried on the next tick";
}

void TrialLifecycle::CountOutcome(Job& job, const Trial& trial) {
  JobTask& task = job.tasks[trial.task_index];
  ++task.done;
  const MeasureResult measured = ToMeasureResult(trial.result);
  if (!measured.ok()) {
    ++job.failed;
    ++task.failed;
  }
  if (task.best.Offer(measured)) task.best_config_json = trial.config_json;
}

void TrialLifecycle::Publish(Job& job, const Trial* trial) {
  proto::JobEvent event;
  *event.mutable_status() = StatusOf(job);
  event.set_trial_id(trial == nullptr ? -1 : trial->id);
  if (trial != nullptr) {
    event.set_config_json(trial->config_json);
    event.set_task_index(trial->task_index);
    if (trial->validates >= 0) event.set_validates(trial->validates);
    *event.mutable_result() = trial->result;
  }
  jobs_->Notify(job, event);
}

proto::TrialResult TrialLifecycle::ErrorResult(MeasureErrorNo error_no,
                                               const std::string& message) {
  proto::TrialResult r;
  r.add_costs(1e9);
  r.set_error_no(static_cast<int>(error_no));
  r.set_error_msg(message);
  r.set_timestamp(clock_->WallSeconds());
  return r;
}

}  // namespace tunefleet

#include "tracker/scheduler.h"

#include <algorithm>
#include <deque>
#include <tuple>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "proto_convert/measure_result.h"
#include "proto_convert/run_request.h"
#include "proto_convert/task_spec.h"
#include "target/target_string.h"
#include "tracker/gauges.h"
#include "tracker/lease_tokens.h"
#include "tuner_core/records/best_record.h"
#include "tuner_core/records/record.h"

namespace tunefleet {
namespace {

constexpr double kGaugeRefreshS = 1.0;

[[nodiscard]] absl::Status NoJob(const std::string& job_id) {
  return absl::NotFoundError(absl::StrCat("no job \"", job_id, "\""));
}

}  // namespace

Scheduler::Scheduler(Store* store, TrackerMetricsInterface* metrics, SchedulerOptions options,
                     ClockInterface* clock)
    : store_(store),
      metrics_(metrics),
      options_(std::move(options)),
      clock_(clock),
      workers_(options_.isolate_measurements),
      store_writer_(store),
      lifecycle_(&options_, &jobs_, &workers_, &store_writer_, metrics, clock),
      leases_(&jobs_, &workers_, &lifecycle_, metrics),
      dispatcher_(&options_, &jobs_, &workers_, &leases_, &lifecycle_, metrics, clock),
      calibrations_(&options_.calibration, &workers_, &dispatcher_, &leases_, metrics) {}

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(Store* store,
                                                             TrackerMetricsInterface* metrics,
                                                             SchedulerOptions options,
                                                             ClockInterface* clock) {
  if (store == nullptr) return absl::InvalidArgumentError("Scheduler needs a store");
  if (clock == nullptr) return absl::InvalidArgumentError("Scheduler needs a clock");
  TF_RETURN_IF_ERROR(options.calibration.Validate());
  std::unique_ptr<Scheduler> s(new Scheduler(store, metrics, std::move(options), clock));
  TF_ASSIGN_OR_RETURN(const std::string lease_key, store->LeaseKey());
  TF_ASSIGN_OR_RETURN(LeaseTokens tokens, LeaseTokens::FromHexKey(lease_key));
  absl::MutexLock lock(&s->mu_);
  s->leases_.SetTokens(std::move(tokens));
  TF_RETURN_IF_ERROR(s->lifecycle_.Resume(*store));
  return s;
}

// ---------------------------------------------------------------- job API

absl::StatusOr<proto::JobStatus> Scheduler::SubmitJob(const proto::JobSpec& spec_in) {
  TF_ASSIGN_OR_RETURN(proto::JobSpec spec, CompleteJobSpec(spec_in, options_));
  TF_ASSIGN_OR_RETURN(std::vector<JobTask> tasks, LoadJobTasks(spec));
  absl::MutexLock lock(&mu_);
  TF_RETURN_IF_ERROR(UserQuotas::CheckSubmit(jobs_, spec));
  TF_ASSIGN_OR_RETURN(Job * job, lifecycle_.Submit(std::move(spec), std::move(tasks)));
  dispatcher_.Enroll(*job);
  dispatcher_.DispatchAll(clock_->NowSeconds());
  return lifecycle_.StatusOf(*job);
}

absl::StatusOr<proto::JobStatus> Scheduler::GetJob(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  const Job* job = jobs_.Find(job_id);
  if (job == nullptr) return NoJob(job_id);
  return lifecycle_.StatusOf(*job);
}

absl::StatusOr<proto::JobStatus> Scheduler::CancelJob(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  Job* job = jobs_.Find(job_id);
  if (job == nullptr) return NoJob(job_id);
  if (!job->finished()) {
    TF_RETURN_IF_ERROR(lifecycle_.End(*job, proto::CANCELLED, "cancelled by a user"));
    // A measurement in flight (maybe a hung kernel) stops now, not at its
    // timeout: the host is free to build and measure other jobs' trials.
    leases_.AbortMeasuresOf(job_id, absl::StrCat("job ", job_id, " was cancelled"));
    dispatcher_.DispatchAll(clock_->NowSeconds());
  }
  return lifecycle_.StatusOf(*job);
}

std::vector<proto::JobStatus> Scheduler::ListJobs(bool include_finished) {
  absl::MutexLock lock(&mu_);
  std::vector<proto::JobStatus> out;
  for (const std::string& id : jobs_.submission_order()) {
    const Job& job = *jobs_.Find(id);
    if (include_finished || !job.finished()) out.push_back(lifecycle_.StatusOf(job));
  }
  return out;
}

absl::StatusOr<proto::BestConfigResponse> Scheduler::BestConfig(
    const proto::BestConfigRequest& request) {
  std::vector<std::string> lines;
  double flops = 0;
  std::string task_name, target;
  nlohmann::json args;
  if (!request.job_id().empty()) {
    {
      absl::MutexLock lock(&mu_);
      TF_ASSIGN_OR_RETURN(const JobTask* task, TaskOfJob(request.job_id(), request.has_task_index(),
                                                         request.task_index(), /*required=*/true));
      flops = task->task->workload().flops();
      // Only that task's records: a model job's tasks share its records.
      task_name = task->task->name();
      args = task->task->workload().args();
      // Any target: the job's records are its own, and "native" was
      // resolved per trial to the agents' CPU.
    }
    TF_ASSIGN_OR_RETURN(lines, store_->LoadRecordLines(request.job_id()));
  } else {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<Task> task, TaskFromSpec(request.task()));
    flops = task->workload().flops();
    task_name = task->name();
    target = request.task().target();
    // Records keep the CPU "native" stood for (the agents'), so a "native"
    // request matches any CPU's records of the task.
    if (absl::StrContains(target, "-mcpu=native")) target.clear();
    args = task->workload().args();
    TF_ASSIGN_OR_RETURN(lines, store_->LoadRecordLines(""));
  }
  std::vector<Record> records;
  for (const std::string& line : lines) {
    absl::StatusOr<Record> r = Record::FromLine(line);
    if (r.ok()) records.push_back(std::move(*r));
  }
  TF_ASSIGN_OR_RETURN(Record best,
                      BestRecord(records, task_name, args.is_null() ? nullptr : &args, target));
  proto::BestConfigResponse response;
  response.set_record_line(best.ToLine());
  response.set_gflops(flops / best.ReportedCost() / 1e9);
  response.set_search_gflops(best.Gflops(flops));
  response.set_figure(best.validated() ? "validated" : "search");
  if (best.validated()) {
    response.set_rel_spread(best.validation->rel_spread());
    response.set_passes(static_cast<int32_t>(best.validation->pass_costs.size()));
  }
  return response;
}

absl::StatusOr<std::vector<std::string>> Scheduler::ExportRecords(
    const proto::ExportRecordsRequest& request) {
  const std::string& job_id = request.job_id();
  if (job_id.empty()) {
    if (request.has_task_index()) return absl::InvalidArgumentError("task_index needs a job_id");
    return store_->LoadRecordLines("");
  }
  std::string task_name;
  nlohmann::json args;
  {
    absl::MutexLock lock(&mu_);
    // A whole job's records need only the job (its tasks may no longer load).
    if (!request.has_task_index()) {
      if (jobs_.Find(job_id) == nullptr) return NoJob(job_id);
      return store_->LoadRecordLines(job_id);
    }
    TF_ASSIGN_OR_RETURN(const JobTask* task,
                        TaskOfJob(job_id, request.has_task_index(), request.task_index(),
                                  /*required=*/false));
    if (task != nullptr) {
      task_name = task->task->name();
      args = task->task->workload().args();
      // Any target: see BestConfig.
    }
  }
  TF_ASSIGN_OR_RETURN(std::vector<std::string> lines, store_->LoadRecordLines(job_id));
  if (!request.has_task_index()) return lines;
  std::vector<std::string> of_task;
  for (std::string& line : lines) {
    absl::StatusOr<Record> r = Record::FromLine(line);
    if (r.ok() && r->task_name == task_name && r->workload_args == args) {
      of_task.push_back(std::move(line));
    }
  }
  return of_task;
}

absl::StatusOr<const JobTask*> Scheduler::TaskOfJob(const std::string& job_id, bool has_index,
                                                    int32_t index, bool required) {
  const Job* job = jobs_.Find(job_id);
  if (job == nullptr) return NoJob(job_id);
  if (!job->loaded()) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id, ": its tasks cannot be loaded (", job->stored.message, ")"));
  }
  const int n = static_cast<int>(job->tasks.size());
  if (!has_index) {
    if (n == 1) return &job->tasks[0];
    if (!required) return nullptr;
    return absl::InvalidArgumentError(absl::StrCat(
        "job ", job_id, " has ", n, " tasks: name one with task_index (0..", n - 1, ")"));
  }
  if (index < 0 || index >= n) {
    return absl::InvalidArgumentError(
        absl::StrCat("job ", job_id, " has no task ", index, " (it has ", n, ": 0..", n - 1, ")"));
  }
  return &job->tasks[index];
}

proto::ListDevicesResponse Scheduler::ListDevices() {
  absl::MutexLock lock(&mu_);
  return workers_.ListDevices();
}

proto::QueueSummaryResponse Scheduler::QueueSummary() {
  absl::MutexLock lock(&mu_);
  return dispatcher_.QueueSummary(clock_->NowSeconds());
}

absl::StatusOr<int64_t> Scheduler::WatchJob(const std::string& job_id, JobWatcher watcher) {
  absl::MutexLock lock(&mu_);
  Job* job = jobs_.Find(job_id);
  if (job == nullptr) return NoJob(job_id);
  proto::JobEvent first;
  *first.mutable_status() = lifecycle_.StatusOf(*job);
  first.set_trial_id(-1);
  return jobs_.Watch(*job, std::move(watcher), first);
}

void Scheduler::Unwatch(int64_t subscription) {
  absl::MutexLock lock(&mu_);
  jobs_.Unwatch(subscription);
}

// ---------------------------------------------------------------- workers

absl::StatusOr<std::string> Scheduler::RegisterWorker(const proto::Register& registration,
                                                      const std::string& peer,
                                                      std::shared_ptr<Outbox> outbox) {
  TF_RETURN_IF_ERROR(WorkerRegistry::ValidateRegistration(registration));
  if (registration.role() == proto::BUILDER && !options_.builder_keys.empty() &&
      !options_.builder_keys.Contains(registration.signing_key())) {
    return absl::PermissionDeniedError(
        registration.signing_key().empty()
            ? absl::StrCat("builder \"", registration.name(),
                           "\" signs nothing (no --signing_key), and this tracker pins builder "
                           "keys (--builder_keys)")
            : absl::StrCat("builder \"", registration.name(), "\" signs with ",
                           registration.signing_key(),
                           ", which this tracker does not pin; add it to --builder_keys"));
  }
  absl::MutexLock lock(&mu_);
  const double now = clock_->NowSeconds();
  if (const Worker* old = workers_.FindByName(registration.name())) {
    if (now - old->last_seen < options_.worker_timeout_s / 2) {
      return absl::AlreadyExistsError(absl::StrCat("a worker named \"", registration.name(),
                                                   "\" is already connected (from ", old->peer,
                                                   "); give each worker a unique --name"));
    }
    // A restarted worker whose old stream the tracker has not seen close.
    const std::string old_id = old->id;
    DropWorker(old_id, absl::AbortedError("replaced by a new session of the same worker"),
               /*close_stream=*/true, RequeueReason::kWorkerLost);
  }
  Worker& worker = workers_.Add(registration, peer, std::move(outbox), now, clock_->WallSeconds());
  proto::TrackerMessage reply;
  reply.mutable_registered()->set_worker_id(worker.id);
  reply.mutable_registered()->set_heartbeat_interval_s(options_.heartbeat_interval_s);
  if (worker.role() == proto::AGENT) {
    for (const std::string& key : options_.builder_keys.texts())
      reply.mutable_registered()->add_builder_keys(key);
  }
  worker.outbox->Send(std::move(reply));
  TF_LOG(INFO) << "worker " << worker.id << " \"" << registration.name() << "\" registered as "
               << proto::WorkerRole_Name(registration.role())
               << (registration.device_key().empty() ? "" : " key " + registration.device_key())
               << " from " << peer;
  // An agent that calibrates measures only once its first calibration passed.
  if (worker.role() == proto::AGENT) calibrations_.Admit(worker);
  const std::string id = worker.id;
  dispatcher_.DispatchAll(now);
  return id;
}

void Scheduler::OnMessage(const std::string& worker_id, const proto::WorkerMessage& message) {
  absl::MutexLock lock(&mu_);
  const double now = clock_->NowSeconds();
  Worker* found = workers_.Find(worker_id);
  if (found == nullptr) return;  // dropped already (e.g. timed out)
  Worker& worker = *found;
  worker.last_seen = now;
  if (message.has_heartbeat()) return;
  if (message.has_build_result()) return HandleBuildResult(worker, message.build_result(), now);
  if (message.has_measure_result())
    return HandleMeasureResult(worker, message.measure_result(), now);
  if (message.has_propose()) return HandlePropose(worker, message.propose(), now);
  if (message.has_calibration()) return HandleCalibration(worker, message.calibration(), now);
  SendError(worker,
            message.kind_case() == proto::WorkerMessage::kRegister
                ? absl::FailedPreconditionError("already registered on this stream")
                : absl::InvalidArgumentError("empty or unknown WorkerMessage"),
            false);
}

void Scheduler::OnDisconnect(const std::string& worker_id, const absl::Status& why) {
  absl::MutexLock lock(&mu_);
  DropWorker(worker_id, why, /*close_stream=*/false, RequeueReason::kWorkerLost);
}

void Scheduler::Tick() {
  absl::MutexLock lock(&mu_);
  const double now = clock_->NowSeconds();
  const double gap = last_tick_ > 0 ? now - last_tick_ : 0;
  last_tick_ = now;
  if (options_.stall_forgiveness_s > 0 && gap > options_.stall_forgiveness_s) {
    // The tracker did not run for `gap` s: the workers' silence and the
    // leases' overrun in that time are its own, not theirs.
    workers_.ForgiveStall(gap);
    leases_.ForgiveStall(gap);
    TF_LOG(WARNING) << "the tracker stalled for " << gap
                    << " s (no tick); no worker or lease is charged for that time";
  }
  for (const auto& [worker_id, why] : leases_.Expired(now)) {
    if (workers_.Find(worker_id) == nullptr) continue;
    DropWorker(worker_id, absl::DeadlineExceededError(why), /*close_stream=*/true,
               RequeueReason::kLeaseExpired);
  }
  for (const auto& [worker_id, why] : workers_.Silent(now, options_.worker_timeout_s)) {
    DropWorker(worker_id, absl::DeadlineExceededError(why), /*close_stream=*/true,
               RequeueReason::kWorkerLost);
  }
  lifecycle_.RetryStoreWrites();
  lifecycle_.FailJobsWithoutAgents();
  calibrations_.RequestDue(now);
  dispatcher_.DispatchAll(now);
  if (metrics_ != nullptr && now - last_gauge_refresh_ >= kGaugeRefreshS) {
    last_gauge_refresh_ = now;
    RefreshGauges(jobs_, workers_, now, *metrics_);
    std::vector<UserUsage> users;
    for (const proto::UserSummary& u : dispatcher_.UserSummaries(now)) {
      users.push_back(
          {u.user(), u.jobs_in_flight(), u.trials_last_hour(), u.measuring(), u.held()});
    }
    metrics_->SetUsers(users);
  }
}

// ---------------------------------------------------------------- private

void Scheduler::HandleBuildResult(Worker& builder, const proto::BuildResult& result,
                                  double received_at) {
  if (!HasRole(builder, proto::BUILDER, "only builders send build results")) return;
  const ResultTrial answered =
      TrialOfResult(builder, result.lease_id(), Stage::kBuild, /*adopt=*/true);
  if (answered.trial == nullptr) return;
  if (answered.leased) leases_.End(result.lease_id());
  Job& job = *answered.job;
  ++builder.completed;
  if (metrics_ != nullptr) metrics_->ObserveBuild(result.build_seconds());
  if (answered.counts && !job.finished()) {
    lifecycle_.Built(job, *answered.trial, result, builder, received_at);
  }
  dispatcher_.DispatchAll(received_at);
}

void Scheduler::HandleMeasureResult(Worker& agent, const proto::MeasureResult& result,
                                    double received_at) {
  if (!HasRole(agent, proto::AGENT, "only agents send measure results")) return;
  // An earlier tracker's lease that wants the artifact again is not worth
  // adopting (this tracker has none): the trial is built again as usual.
  const ResultTrial answered = TrialOfResult(agent, result.lease_id(), Stage::kMeasure,
                                             /*adopt=*/!result.need_artifact());
  if (answered.trial == nullptr) return;
  Job& job = *answered.job;
  if (answered.leased) {
    if (result.need_artifact() && answered.counts && !job.finished()) {
      dispatcher_.ResendWithArtifact(agent, job, *answered.trial);
      return;
    }
    leases_.End(result.lease_id());
  }
  ++agent.completed;
  if (metrics_ != nullptr)
    metrics_->ObserveMeasure(job.stored.spec.device_key(), result.measure_seconds());
  // The agent is free whatever becomes of its result: it gets its next
  // measurement before the result's store write (an fsync, on a durable
  // store), which is not an acknowledgement of anything. Then the result
  // (written before anyone hears of it), and whatever it makes possible.
  dispatcher_.MarkAgentFree(agent);
  dispatcher_.DispatchAll(received_at);
  if (answered.counts && !job.finished()) lifecycle_.Measured(job, *answered.trial, result, agent);
  dispatcher_.DispatchAll(received_at);
}

void Scheduler::HandleCalibration(Worker& agent, const proto::Calibration& calibration,
                                  double received_at) {
  if (!HasRole(agent, proto::AGENT, "only agents send calibrations")) return;
  absl::Status kept =
      calibrations_.Calibrated(agent, calibration, received_at, clock_->WallSeconds());
  if (!kept.ok()) return SendError(agent, kept, false);
  dispatcher_.DispatchAll(received_at);
}

void Scheduler::HandlePropose(Worker& tuner, const proto::ProposeTrials& propose,
                              double received_at) {
  if (!HasRole(tuner, proto::TUNER, "only tuners propose trials")) return;
  Job* job = jobs_.Find(propose.job_id());
  if (job == nullptr || job->tuner_worker != tuner.id) {
    SendError(tuner,
              absl::FailedPreconditionError(absl::StrCat("proposal for job \"", propose.job_id(),
                                                         "\", which this tuner does not hold")),
              false);
    return;
  }
  lifecycle_.Propose(*job, tuner, propose, received_at);
  dispatcher_.DispatchAll(received_at);
}

Scheduler::ResultTrial Scheduler::TrialOfResult(Worker& worker, const std::string& lease_id,
                                                Stage stage, bool adopt) {
  ResultTrial answered;
  if (const Lease* lease = leases_.Find(worker, lease_id, stage)) {
    answered.job = jobs_.Find(lease->job_id);
    answered.trial = &answered.job->trials.at(lease->trial_id);
    answered.leased = true;
    answered.counts = !lease->revoked;
  } else if (adopt) {
    std::tie(answered.job, answered.trial) = AdoptResult(worker, lease_id, stage);
  }
  return answered;
}

std::pair<Job*, Trial*> Scheduler::AdoptResult(Worker& worker, const std::string& lease_id,
                                               Stage stage) {
  const std::pair<Job*, Trial*> none = {nullptr, nullptr};
  auto refuse = [&](absl::string_view why) {
    SendError(worker,
              absl::NotFoundError(absl::StrCat("a ", StageName(stage), " result for lease \"",
                                               absl::CHexEscape(lease_id.substr(0, 120)),
                                               "\", which this worker does not hold: ", why)),
              false);
    return none;
  };
  absl::StatusOr<LeaseClaim> claim = leases_.Claim(worker, lease_id);
  if (!claim.ok()) {
    // An "L<n>" id, or one this store's key never signed for this worker.
    return refuse(lease_id.size() > 0 && lease_id.find('.') == std::string::npos
                      ? "expired, requeued or never given"
                      : claim.status().message());
  }
  if (claim->stage != stage) return refuse("it leased another stage");
  Job* job = jobs_.Find(claim->job_id);
  if (job == nullptr) return refuse("its job is unknown here");
  auto found = job->trials.find(claim->trial_id);
  if (found == job->trials.end()) return refuse("its trial is unknown here");
  Trial& trial = found->second;
  // Counted once: a trial already answered (before the break, or by this
  // tracker's own lease) takes nothing more, and the worker is not scolded
  // for a resend.
  const bool waiting =
      !job->finished() && !trial.done &&
      (trial.state == TrialState::kToBuild || trial.state == TrialState::kBuilding ||
       (stage == Stage::kMeasure &&
        (trial.state == TrialState::kToMeasure || trial.state == TrialState::kMeasuring)));
  if (!waiting) {
    TF_LOG(INFO) << "job " << job->stored.job_id << " trial " << trial.id << ": a "
                 << StageName(stage) << " result from " << worker.registration.name()
                 << " for a lease of an earlier tracker, not needed (answered already)";
    return none;
  }
  const std::string reason = absl::StrCat("the ", StageName(stage), " result of an earlier lease (",
                                          worker.registration.name(), ") arrived");
  if (!trial.lease_id.empty()) {
    leases_.Revoke(trial.lease_id, reason);
    trial.lease_id.clear();
  }
  for (std::deque<int64_t>* queue : {&job->to_build, &job->to_measure}) {
    queue->erase(std::remove(queue->begin(), queue->end(), trial.id), queue->end());
  }
  if (trial.target.empty()) {
    // The target its build had ("native" as the key's agents say it), as
    // the dispatcher sets it before a build.
    trial.target = WithNativeCpu(job->stored.spec.tasks(trial.task_index).task().target(),
                                 workers_.LlvmCpuOfKey(job->stored.spec.device_key()));
  }
  TF_LOG(INFO) << "job " << job->stored.job_id << " trial " << trial.id << ": adopted the "
               << StageName(stage) << " result of an earlier tracker's lease from "
               << worker.registration.name();
  if (metrics_ != nullptr) metrics_->ResultAdopted(stage == Stage::kBuild);
  return {job, &trial};
}

bool Scheduler::HasRole(Worker& worker, proto::WorkerRole role, const char* refusal) {
  if (worker.role() == role) return true;
  SendError(worker, absl::PermissionDeniedError(refusal), false);
  return false;
}

void Scheduler::SendError(Worker& worker, const absl::Status& status, bool fatal) {
  if (metrics_ != nullptr) metrics_->Rejected("refused_message");
  TF_LOG(WARNING) << "refused a message from worker " << worker.id << " \""
                  << worker.registration.name() << "\": " << status.ToString();
  proto::TrackerMessage m;
  m.mutable_error()->set_code(absl::StatusCodeToString(status.code()));
  m.mutable_error()->set_message(std::string(status.message()));
  m.mutable_error()->set_fatal(fatal);
  worker.outbox->Send(std::move(m));
}

void Scheduler::DropWorker(const std::string& worker_id, const absl::Status& why, bool close_stream,
                           RequeueReason kind) {
  std::unique_ptr<Worker> worker = workers_.Remove(worker_id);
  if (worker == nullptr) return;
  dispatcher_.Forget(*worker);
  TF_LOG(WARNING) << "worker " << worker_id << " \"" << worker->registration.name() << "\" lost ("
                  << why.ToString() << "); requeueing " << worker->leases.size() << " lease(s)"
                  << (worker->jobs.empty()
                          ? ""
                          : absl::StrCat(", releasing ", worker->jobs.size(), " job(s)"));
  if (close_stream) worker->outbox->Close(why);
  leases_.RequeueAllOf(*worker,
                       absl::StrCat(proto::WorkerRole_Name(worker->role()), " \"",
                                    worker->registration.name(), "\" lost: ", why.message()),
                       kind);
  for (const std::string& job_id : worker->jobs) {
    Job* job = jobs_.Find(job_id);
    if (job != nullptr && job->tuner_worker == worker_id) job->tuner_worker.clear();
  }
  dispatcher_.DispatchAll(clock_->NowSeconds());
}

}  // namespace tunefleet

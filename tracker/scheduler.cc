#include "tracker/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/cuda_target.h"
#include "common/logging.h"
#include "common/trial_result.h"
#include "device_agent/measure_conversions.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tuner_core/measure/measure.h"
#include "tuner_core/records/best_record.h"
#include "tuner_core/records/record.h"
#include "tuner_core/tuners/tuner_factory.h"

namespace tunefleet {
namespace {

constexpr size_t kDispatchRing = 10000;
constexpr double kGaugeRefreshS = 1.0;

// The target strings the builders accept, checked here so that a job with a
// typo fails at submission instead of in every build.
absl::Status ValidateTarget(const std::string& target) {
  std::vector<std::string> parts = absl::StrSplit(target, ' ', absl::SkipEmpty());
  // The builder checks the architecture against LLVM; the flags are read the same way here.
  if (IsCudaTarget(target)) return ParseCudaTargetFlags(target).status();
  if (parts.empty() || parts[0] != "llvm") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unsupported target \"", target,
        "\": a target starts with \"llvm\" (e.g. \"llvm -mcpu=skylake-avx512\") or \"cuda\" (e.g. "
        "\"cuda -mcpu=sm_90\")"));
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (absl::StartsWith(p, "-mtriple=")) {
      absl::string_view triple = absl::string_view(p).substr(9);
      if (!absl::StartsWith(triple, "x86_64") && !absl::StartsWith(triple, "aarch64") &&
          !absl::StartsWith(triple, "nvptx64")) {
        return absl::InvalidArgumentError(
            absl::StrCat("target \"", target, "\": unsupported triple \"", triple,
                         "\" (x86_64-*, aarch64-* or nvptx64-*)"));
      }
    } else if (!absl::StartsWith(p, "-mcpu=") && !absl::StartsWith(p, "-mattr=")) {
      return absl::InvalidArgumentError(
          absl::StrCat("target \"", target, "\": unknown flag \"", p, "\" (-mtriple=, -mcpu=, -mattr=)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Task>> MakeTask(const proto::TaskSpec& spec) {
  nlohmann::json args = nlohmann::json::parse(spec.workload_args_json(), nullptr, /*allow_exceptions=*/false);
  if (args.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload_args_json is not valid JSON: ", spec.workload_args_json()));
  }
  TF_RETURN_IF_ERROR(ValidateTarget(spec.target()));
  return Task::Make(spec.template_name(), spec.workload_name(), args, spec.target());
}


proto::TrialResult ErrorResult(MeasureErrorNo error_no, const std::string& message, double now_wall) {
  proto::TrialResult r;
  r.add_costs(1e9);
  r.set_error_no(static_cast<int>(error_no));
  r.set_error_msg(message);
  r.set_timestamp(now_wall);
  return r;
}

const char* StageName(int stage) { return stage == 0 ? "build" : "measure"; }

// "ipv4:127.0.0.1:5555" -> "127.0.0.1"; "ipv6:[::1]:5555" -> "[::1]".
std::string HostOfPeer(const std::string& peer) {
  std::string p = peer;
  for (const char* prefix : {"ipv4:", "ipv6:"}) {
    if (absl::StartsWith(p, prefix)) p = p.substr(strlen(prefix));
  }
  size_t colon = p.rfind(':');
  if (colon != std::string::npos && (p.front() == '[' ? p.find(']') < colon : p.find(':') == colon)) {
    p = p.substr(0, colon);
  }
  return p;
}

}  // namespace

SchedulerClock SchedulerClock::Real() {
  SchedulerClock c;
  c.steady = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  c.wall = [] {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  };
  return c;
}

Scheduler::Scheduler(Store* store, TrackerMetricsInterface* metrics, SchedulerOptions options, SchedulerClock clock)
    : store_(store), metrics_(metrics), options_(std::move(options)), clock_(std::move(clock)) {}

Scheduler::~Scheduler() = default;

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(Store* store, TrackerMetricsInterface* metrics,
                                                             SchedulerOptions options, SchedulerClock clock) {
  if (store == nullptr) return absl::InvalidArgumentError("Scheduler needs a store");
  std::unique_ptr<Scheduler> s(new Scheduler(store, metrics, std::move(options), std::move(clock)));
  absl::MutexLock lock(&s->mu_);
  TF_RETURN_IF_ERROR(s->Load());
  return s;
}

absl::Status Scheduler::Load() {
  TF_ASSIGN_OR_RETURN(std::vector<StoredJob> stored, store_->LoadJobs());
  for (StoredJob& sj : stored) {
    auto job = std::make_unique<Job>();
    next_job_sequence_ = std::max(next_job_sequence_, sj.sequence + 1);
    job->stored = std::move(sj);
    absl::StatusOr<std::unique_ptr<Task>> task = MakeTask(job->stored.spec.task());
    const std::string id = job->stored.job_id;
    if (!task.ok()) {
      // The code that accepted it no longer does (e.g. a template was
      // removed): fail this job, keep the others.
      if (!job->finished()) {
        job->stored.state = proto::FAILED;
        job->stored.message = absl::StrCat("cannot resume: ", task.status().message());
        job->stored.finished_at = clock_.wall();
        TF_RETURN_IF_ERROR(store_->PutJob(job->stored));
      }
    } else {
      job->task = std::move(*task);
    }
    if (!job->finished()) {
      TF_ASSIGN_OR_RETURN(std::vector<StoredTrial> trials, store_->LoadTrials(id));
      for (StoredTrial& st : trials) {
        Trial t;
        t.id = st.trial_id;
        t.config_json = std::move(st.config_json);
        t.config_index = st.config_index;
        t.attempts = st.attempts;
        if (st.done) {
          t.done = true;
          t.state = TrialState::kDone;
          t.result = std::move(st.result);
          ++job->done;
          if (t.result.error_no() != 0) {
            ++job->failed;
          } else {
            double cost = ToMeasureResult(t.result).MeanCost();
            if (job->best_cost == 0 || cost < job->best_cost) {
              job->best_cost = cost;
              job->best_config_json = t.config_json;
            }
          }
        } else {
          t.state = TrialState::kToBuild;
          t.queued_at = clock_.steady();
          job->to_build.push_back(t.id);
        }
        job->trials.emplace(t.id, std::move(t));
      }
      if (job->stored.state == proto::RUNNING) job->stored.state = proto::QUEUED;  // until a tuner claims it
      TF_LOG(INFO) << "resuming job " << id << ": " << job->done << " of " << job->stored.spec.n_trial()
                   << " trials done, " << job->to_build.size() << " to build again";
    }
    job_order_.push_back(id);
    jobs_.emplace(id, std::move(job));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------- job API

absl::StatusOr<proto::JobStatus> Scheduler::SubmitJob(const proto::JobSpec& spec_in) {
  proto::JobSpec spec = spec_in;
  if (spec.n_trial() <= 0 || spec.n_trial() > options_.max_trials_per_job) {
    return absl::InvalidArgumentError(absl::StrCat("n_trial must be in [1, ", options_.max_trials_per_job,
                                                   "], got ", spec.n_trial()));
  }
  if (spec.device_key().empty()) return absl::InvalidArgumentError("device_key is empty");
  if (spec.priority() < 0) return absl::InvalidArgumentError("priority must be >= 0");
  if (spec.max_attempts() < 0) return absl::InvalidArgumentError("max_attempts must be >= 0");
  if (spec.window() < 0) return absl::InvalidArgumentError("window must be >= 0");
  if (spec.priority() == 0) spec.set_priority(1);
  if (spec.max_attempts() == 0) spec.set_max_attempts(options_.default_max_attempts);
  if (spec.build_timeout_s() <= 0) spec.set_build_timeout_s(options_.default_build_timeout_s);
  if (spec.tuner().empty()) spec.set_tuner("random");
  {
    const std::vector<std::string> names = TunerNames();
    if (std::find(names.begin(), names.end(), spec.tuner()) == names.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown tuner \"", spec.tuner(), "\" (one of: ", absl::StrJoin(names, ", "), ")"));
    }
  }
  if (!spec.has_measure()) *spec.mutable_measure() = ToProto(MeasureOptions());  // AutoTVM's defaults
  const proto::MeasureOptions& m = spec.measure();
  if (m.number() <= 0 || m.repeat() <= 0 || m.timeout_s() <= 0 || m.min_repeat_ms() < 0 ||
      m.cooldown_interval_s() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("measure options out of range (number and repeat >= 1, timeout_s > 0, "
                     "min_repeat_ms and cooldown_interval_s >= 0): ", m.ShortDebugString()));
  }
  TF_ASSIGN_OR_RETURN(std::unique_ptr<Task> task, MakeTask(spec.task()));
  if (task->space().size() <= 0) return absl::InvalidArgumentError("the task's config space is empty");

  absl::MutexLock lock(&mu_);
  auto job = std::make_unique<Job>();
  job->stored.sequence = next_job_sequence_++;
  job->stored.job_id = absl::StrCat("job-", job->stored.sequence);
  job->stored.spec = std::move(spec);
  job->stored.state = proto::QUEUED;
  job->stored.created_at = clock_.wall();
  job->task = std::move(task);
  job->build_pass = virtual_build_pass_;
  job->measure_pass = virtual_measure_pass_[job->stored.spec.device_key()];
  TF_RETURN_IF_ERROR(store_->PutJob(job->stored));
  const std::string id = job->stored.job_id;
  TF_LOG(INFO) << "job " << id << " submitted: " << job->stored.spec.task().workload_name() << " "
               << job->stored.spec.task().workload_args_json() << " on key " << job->stored.spec.device_key()
               << ", " << job->stored.spec.n_trial() << " trials, tuner " << job->stored.spec.tuner();
  job_order_.push_back(id);
  Job& ref = *job;
  jobs_.emplace(id, std::move(job));
  AssignJobs();
  return StatusOf(ref);
}

absl::StatusOr<proto::JobStatus> Scheduler::GetJob(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return absl::NotFoundError(absl::StrCat("no job \"", job_id, "\""));
  return StatusOf(*it->second);
}

absl::StatusOr<proto::JobStatus> Scheduler::CancelJob(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return absl::NotFoundError(absl::StrCat("no job \"", job_id, "\""));
  Job& job = *it->second;
  if (!job.finished()) EndJob(job, proto::CANCELLED, "cancelled by a user");
  return StatusOf(job);
}

std::vector<proto::JobStatus> Scheduler::ListJobs(bool include_finished) {
  absl::MutexLock lock(&mu_);
  std::vector<proto::JobStatus> out;
  for (const std::string& id : job_order_) {
    const Job& job = *jobs_.at(id);
    if (!include_finished && job.finished()) continue;
    out.push_back(StatusOf(job));
  }
  return out;
}

absl::StatusOr<proto::BestConfigResponse> Scheduler::BestConfig(const proto::BestConfigRequest& request) {
  std::vector<std::string> lines;
  double flops = 0;
  std::string task_name, target;
  nlohmann::json args;
  if (!request.job_id().empty()) {
    {
      absl::MutexLock lock(&mu_);
      auto it = jobs_.find(request.job_id());
      if (it == jobs_.end()) return absl::NotFoundError(absl::StrCat("no job \"", request.job_id(), "\""));
      if (it->second->task == nullptr) return absl::FailedPreconditionError("the job's task cannot be loaded");
      flops = it->second->task->workload().flops();
    }
    TF_ASSIGN_OR_RETURN(lines, store_->LoadRecordLines(request.job_id()));
  } else {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<Task> task, MakeTask(request.task()));
    flops = task->workload().flops();
    task_name = task->name();
    target = request.task().target();
    args = task->workload().args();
    TF_ASSIGN_OR_RETURN(lines, store_->LoadRecordLines(""));
  }
  std::vector<Record> records;
  for (const std::string& line : lines) {
    absl::StatusOr<Record> r = Record::FromLine(line);
    if (r.ok()) records.push_back(std::move(*r));
  }
  TF_ASSIGN_OR_RETURN(Record best, BestRecord(records, task_name, args.is_null() ? nullptr : &args, target));
  proto::BestConfigResponse response;
  response.set_record_line(best.ToLine());
  response.set_gflops(best.Gflops(flops));
  return response;
}

absl::StatusOr<std::vector<std::string>> Scheduler::ExportRecords(const std::string& job_id) {
  if (!job_id.empty()) {
    absl::MutexLock lock(&mu_);
    if (jobs_.count(job_id) == 0) return absl::NotFoundError(absl::StrCat("no job \"", job_id, "\""));
  }
  return store_->LoadRecordLines(job_id);
}

proto::ListDevicesResponse Scheduler::ListDevices() {
  absl::MutexLock lock(&mu_);
  proto::ListDevicesResponse response;
  std::vector<const Worker*> sorted;
  for (const auto& [id, w] : workers_) sorted.push_back(w.get());
  std::sort(sorted.begin(), sorted.end(), [](const Worker* a, const Worker* b) {
    return std::make_tuple(a->role(), a->registration.device_key(), a->registration.name()) <
           std::make_tuple(b->role(), b->registration.device_key(), b->registration.name());
  });
  for (const Worker* w : sorted) {
    proto::WorkerStatus* s = response.add_workers();
    s->set_worker_id(w->id);
    s->set_name(w->registration.name());
    s->set_role(w->role());
    s->set_device_key(w->registration.device_key());
    *s->mutable_device() = w->registration.device();
    s->set_parallelism(w->registration.parallelism());
    int busy_units = w->role() == proto::TUNER ? static_cast<int>(w->jobs.size()) : static_cast<int>(w->leases.size());
    s->set_leases(busy_units);
    int capacity = w->role() == proto::AGENT ? 1 : std::max(1, w->registration.parallelism());
    s->set_state(busy_units >= capacity ? "busy" : "free");
    s->set_connected_at(w->connected_at);
    s->set_peer(w->peer);
    s->set_completed(w->completed);
  }
  return response;
}

proto::QueueSummaryResponse Scheduler::QueueSummary() {
  absl::MutexLock lock(&mu_);
  proto::QueueSummaryResponse response;
  const double now = clock_.steady();
  std::map<std::string, proto::KeySummary> keys;
  for (const auto& [id, w] : workers_) {
    if (w->role() == proto::AGENT) {
      proto::KeySummary& k = keys[w->registration.device_key()];
      k.set_total(k.total() + 1);
      if (w->leases.empty()) k.set_free(k.free() + 1); else k.set_busy(k.busy() + 1);
    } else if (w->role() == proto::BUILDER) {
      response.set_builders(response.builders() + 1);
      response.set_build_slots_free(response.build_slots_free() +
                                    std::max<int>(0, std::max(1, w->registration.parallelism()) -
                                                         static_cast<int>(w->leases.size())));
    } else if (w->role() == proto::TUNER) {
      response.set_tuners(response.tuners() + 1);
    }
  }
  for (const std::string& id : job_order_) {
    const Job& job = *jobs_.at(id);
    if (job.finished()) continue;
    proto::KeySummary& k = keys[job.stored.spec.device_key()];
    k.set_pending(k.pending() + static_cast<int64_t>(job.to_measure.size()));
    if (!job.to_measure.empty()) {
      double age = now - job.trials.at(job.to_measure.front()).queued_at;
      k.set_oldest_pending_s(std::max(k.oldest_pending_s(), age));
    }
    response.set_builds_pending(response.builds_pending() + static_cast<int64_t>(job.to_build.size()));
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

absl::StatusOr<int64_t> Scheduler::WatchJob(const std::string& job_id, JobWatcher watcher) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return absl::NotFoundError(absl::StrCat("no job \"", job_id, "\""));
  Job& job = *it->second;
  proto::JobEvent first;
  *first.mutable_status() = StatusOf(job);
  first.set_trial_id(-1);
  const int64_t id = next_watch_++;
  if (!watcher(first)) return id;
  if (!job.finished()) {
    job.watchers.emplace(id, std::move(watcher));
    watch_jobs_.emplace(id, job_id);
  }
  return id;
}

void Scheduler::Unwatch(int64_t subscription) {
  absl::MutexLock lock(&mu_);
  auto it = watch_jobs_.find(subscription);
  if (it == watch_jobs_.end()) return;
  auto job = jobs_.find(it->second);
  if (job != jobs_.end()) job->second->watchers.erase(subscription);
  watch_jobs_.erase(it);
}

// ---------------------------------------------------------------- workers

absl::StatusOr<std::string> Scheduler::RegisterWorker(const proto::Register& registration, const std::string& peer,
                                                      std::shared_ptr<Outbox> outbox) {
  if (registration.name().empty()) return absl::InvalidArgumentError("Register.name is empty");
  if (registration.name().size() > 256) return absl::InvalidArgumentError("Register.name is longer than 256 bytes");
  switch (registration.role()) {
    case proto::AGENT:
      if (registration.device_key().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("agent \"", registration.name(), "\" registered without a device_key"));
      }
      break;
    case proto::BUILDER:
    case proto::TUNER:
      if (registration.parallelism() < 0) return absl::InvalidArgumentError("Register.parallelism < 0");
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("worker \"", registration.name(), "\" registered without a role"));
  }
  absl::MutexLock lock(&mu_);
  const double now = clock_.steady();
  auto existing = worker_by_name_.find(registration.name());
  if (existing != worker_by_name_.end()) {
    Worker& old = *workers_.at(existing->second);
    if (now - old.last_seen < options_.worker_timeout_s / 2) {
      return absl::AlreadyExistsError(absl::StrCat("a worker named \"", registration.name(),
                                                   "\" is already connected (from ", old.peer,
                                                   "); give each worker a unique --name"));
    }
    // A restarted worker whose old stream the tracker has not seen close.
    DropWorker(old.id, absl::AbortedError("replaced by a new session of the same worker"), /*close_stream=*/true);
  }
  auto worker = std::make_unique<Worker>();
  worker->id = absl::StrCat("w", next_worker_++);
  worker->registration = registration;
  worker->peer = peer;
  worker->outbox = std::move(outbox);
  worker->connected_at = clock_.wall();
  worker->last_seen = now;
  worker->host = HostOfPeer(peer);
  worker->isolating = options_.isolate_measurements &&
                      (registration.role() == proto::BUILDER ||
                       (registration.role() == proto::AGENT && registration.device().simulated_measure_s() <= 0));
  const std::string id = worker->id;
  Worker& w = *worker;
  workers_.emplace(id, std::move(worker));
  worker_by_name_[registration.name()] = id;
  if (w.isolating && w.role() == proto::AGENT) host_agents_[w.host].insert(id);

  proto::TrackerMessage reply;
  reply.mutable_registered()->set_worker_id(id);
  reply.mutable_registered()->set_heartbeat_interval_s(options_.heartbeat_interval_s);
  w.outbox->Send(std::move(reply));
  TF_LOG(INFO) << "worker " << id << " \"" << registration.name() << "\" registered as "
               << proto::WorkerRole_Name(registration.role())
               << (registration.device_key().empty() ? "" : " key " + registration.device_key()) << " from " << peer;

  switch (registration.role()) {
    case proto::AGENT:
      MarkAgentFree(w);
      DispatchMeasures(registration.device_key(), now);
      break;
    case proto::BUILDER:
      builders_.insert(id);
      DispatchBuilds(now);
      break;
    case proto::TUNER:
      tuners_.insert(id);
      AssignJobs();
      break;
    default:
      break;
  }
  return id;
}

void Scheduler::OnMessage(const std::string& worker_id, const proto::WorkerMessage& message) {
  absl::MutexLock lock(&mu_);
  const double now = clock_.steady();
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return;  // dropped already (e.g. timed out)
  Worker& worker = *it->second;
  worker.last_seen = now;
  switch (message.kind_case()) {
    case proto::WorkerMessage::kHeartbeat:
      break;
    case proto::WorkerMessage::kBuildResult:
      if (worker.role() != proto::BUILDER) {
        SendError(worker, absl::PermissionDeniedError("only builders send build results"), false);
        break;
      }
      HandleBuildResult(worker, message.build_result(), now);
      break;
    case proto::WorkerMessage::kMeasureResult:
      if (worker.role() != proto::AGENT) {
        SendError(worker, absl::PermissionDeniedError("only agents send measure results"), false);
        break;
      }
      HandleMeasureResult(worker, message.measure_result(), now);
      break;
    case proto::WorkerMessage::kPropose:
      if (worker.role() != proto::TUNER) {
        SendError(worker, absl::PermissionDeniedError("only tuners propose trials"), false);
        break;
      }
      HandlePropose(worker, message.propose(), now);
      break;
    case proto::WorkerMessage::kRegister:
      SendError(worker, absl::FailedPreconditionError("already registered on this stream"), false);
      break;
    default:
      SendError(worker, absl::InvalidArgumentError("empty or unknown WorkerMessage"), false);
      break;
  }
}

void Scheduler::OnDisconnect(const std::string& worker_id, const absl::Status& why) {
  absl::MutexLock lock(&mu_);
  DropWorker(worker_id, why, /*close_stream=*/false);
}

void Scheduler::DropWorker(const std::string& worker_id, const absl::Status& why, bool close_stream) {
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return;
  std::unique_ptr<Worker> worker = std::move(it->second);
  workers_.erase(it);
  auto by_name = worker_by_name_.find(worker->registration.name());
  if (by_name != worker_by_name_.end() && by_name->second == worker_id) worker_by_name_.erase(by_name);
  builders_.erase(worker_id);
  tuners_.erase(worker_id);
  if (auto h = host_agents_.find(worker->host); h != host_agents_.end()) h->second.erase(worker_id);
  if (worker->free_listed) {
    auto& q = free_agents_[worker->registration.device_key()];
    q.erase(std::remove(q.begin(), q.end(), worker_id), q.end());
  }
  TF_LOG(WARNING) << "worker " << worker_id << " \"" << worker->registration.name() << "\" lost ("
                  << why.ToString() << "); requeueing " << worker->leases.size() << " lease(s)"
                  << (worker->jobs.empty() ? "" : absl::StrCat(", releasing ", worker->jobs.size(), " job(s)"));
  if (close_stream) worker->outbox->Close(why);
  const std::string reason = absl::StrCat(proto::WorkerRole_Name(worker->role()), " \"",
                                          worker->registration.name(), "\" lost: ", why.message());
  std::set<std::string> leases = worker->leases;
  for (const std::string& lease_id : leases) RequeueLease(lease_id, reason);
  for (const std::string& job_id : worker->jobs) {
    auto job = jobs_.find(job_id);
    if (job != jobs_.end() && job->second->tuner_worker == worker_id) job->second->tuner_worker.clear();
  }
  if (!worker->jobs.empty()) AssignJobs();
  const double now = clock_.steady();
  DispatchAllMeasures(now);
  DispatchBuilds(now);
}

void Scheduler::DispatchAllMeasures(double since) {
  std::set<std::string> keys;
  for (const auto& [id, job] : jobs_) {
    if (!job->finished() && !job->to_measure.empty()) keys.insert(job->stored.spec.device_key());
  }
  for (const std::string& key : keys) DispatchMeasures(key, since);
}

bool Scheduler::HostMayMeasure(const std::string& host) const {
  auto it = host_builds_.find(host);
  return it == host_builds_.end() || it->second == 0;
}

bool Scheduler::HostMayBuild(const std::string& host) const {
  if (auto it = host_measures_.find(host); it != host_measures_.end() && it->second > 0) return false;
  // Measurements waiting for a free agent of this host go first.
  auto agents = host_agents_.find(host);
  if (agents == host_agents_.end() || agents->second.empty()) return true;
  std::set<std::string> waiting_keys;
  for (const auto& [id, job] : jobs_) {
    if (!job->finished() && !job->to_measure.empty()) waiting_keys.insert(job->stored.spec.device_key());
  }
  for (const std::string& agent_id : agents->second) {
    const Worker& a = *workers_.at(agent_id);
    if (a.free_listed && waiting_keys.count(a.registration.device_key()) > 0) return false;
  }
  return true;
}

void Scheduler::SendError(Worker& worker, const absl::Status& status, bool fatal) {
  if (metrics_ != nullptr) metrics_->Rejected("refused_message");
  TF_LOG(WARNING) << "refused a message from worker " << worker.id << " \"" << worker.registration.name()
                  << "\": " << status.ToString();
  proto::TrackerMessage m;
  m.mutable_error()->set_code(absl::StatusCodeToString(status.code()));
  m.mutable_error()->set_message(std::string(status.message()));
  m.mutable_error()->set_fatal(fatal);
  worker.outbox->Send(std::move(m));
}

// ---------------------------------------------------------------- results

Scheduler::Lease* Scheduler::FindLease(Worker& worker, const std::string& lease_id, Stage stage) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end() || it->second.worker_id != worker.id || it->second.stage != stage) {
    SendError(worker,
              absl::NotFoundError(absl::StrCat("a ", StageName(static_cast<int>(stage)), " result for lease \"",
                                               lease_id, "\", which this worker does not hold (expired, "
                                               "requeued or never given)")),
              false);
    return nullptr;
  }
  return &it->second;
}

void Scheduler::EndLease(const std::string& lease_id) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return;
  if (it->second.isolating) {
    int& n = it->second.stage == Stage::kBuild ? host_builds_[it->second.host] : host_measures_[it->second.host];
    n = std::max(0, n - 1);
  }
  auto w = workers_.find(it->second.worker_id);
  if (w != workers_.end()) w->second->leases.erase(lease_id);
  leases_.erase(it);
}

void Scheduler::HandleBuildResult(Worker& worker, const proto::BuildResult& result, double received_at) {
  Lease* lease = FindLease(worker, result.lease_id(), Stage::kBuild);
  if (lease == nullptr) return;
  const std::string job_id = lease->job_id;
  const int64_t trial_id = lease->trial_id;
  EndLease(result.lease_id());
  ++worker.completed;
  Job& job = *jobs_.at(job_id);
  Trial& trial = job.trials.at(trial_id);
  --job.building;
  if (metrics_ != nullptr) metrics_->ObserveBuild(result.build_seconds());
  if (job.finished()) {
    DispatchAllMeasures(received_at);
    DispatchBuilds(received_at);
    return;
  }
  trial.build_seconds = result.build_seconds();
  trial.builder = worker.registration.name();
  if (result.error_no() != 0) {
    proto::TrialResult r = ErrorResult(static_cast<MeasureErrorNo>(result.error_no()), result.error_msg(), clock_.wall());
    r.set_build_seconds(result.build_seconds());
    r.set_all_cost(result.build_seconds());
    r.set_builder(trial.builder);
    FinishTrial(job, trial, std::move(r));
  } else if (result.shared_object().empty() || result.entry_name().empty() || result.artifact_hash().empty()) {
    proto::TrialResult r = ErrorResult(MeasureErrorNo::kCompileHost,
                                       "the builder returned success without an artifact, entry name or hash",
                                       clock_.wall());
    r.set_builder(trial.builder);
    FinishTrial(job, trial, std::move(r));
  } else if (static_cast<int64_t>(result.shared_object().size()) > options_.max_artifact_bytes) {
    proto::TrialResult r = ErrorResult(
        MeasureErrorNo::kCompileHost,
        absl::StrCat("artifact of ", result.shared_object().size(), " bytes exceeds the limit of ",
                     options_.max_artifact_bytes),
        clock_.wall());
    r.set_builder(trial.builder);
    FinishTrial(job, trial, std::move(r));
  } else {
    trial.shared_object = std::make_shared<const std::string>(result.shared_object());
    trial.entry_name = result.entry_name();
    trial.artifact_hash = result.artifact_hash();
    trial.state = TrialState::kToMeasure;
    trial.queued_at = received_at;
    job.to_measure.push_back(trial.id);
  }
  // Measurements first: with isolation, the host that just finished a
  // build may be free to measure now, and waiting measurements hold back
  // new builds there.
  DispatchAllMeasures(received_at);
  DispatchBuilds(received_at);
}

void Scheduler::HandleMeasureResult(Worker& worker, const proto::MeasureResult& result, double received_at) {
  Lease* lease = FindLease(worker, result.lease_id(), Stage::kMeasure);
  if (lease == nullptr) return;
  const std::string job_id = lease->job_id;
  const int64_t trial_id = lease->trial_id;
  Job& job = *jobs_.at(job_id);
  Trial& trial = job.trials.at(trial_id);
  if (result.need_artifact() && !job.finished()) {
    worker.artifacts_sent.erase(trial.artifact_hash);
    SendMeasure(worker, job, trial, /*with_bytes=*/true);
    return;
  }
  EndLease(result.lease_id());
  ++worker.completed;
  --job.measuring;
  if (metrics_ != nullptr) metrics_->ObserveMeasure(job.stored.spec.device_key(), result.measure_seconds());
  if (!job.finished()) {
    const proto::RunResult& run = result.run();
    proto::TrialResult r;
    if (run.error_no() == 0 && run.costs_size() == 0) {
      r = ErrorResult(MeasureErrorNo::kUnknown, "the agent reported success without costs", clock_.wall());
    } else {
      r.mutable_costs()->CopyFrom(run.costs());
      if (r.costs_size() == 0) r.add_costs(1e9);
      r.set_error_no(run.error_no());
      r.set_error_msg(run.error_msg());
      r.set_timestamp(clock_.wall());
    }
    r.set_build_seconds(trial.build_seconds);
    r.set_measure_seconds(result.measure_seconds());
    r.set_all_cost(trial.build_seconds + run.prepare_seconds() + run.load_seconds() + run.check_seconds() +
                   run.run_seconds());
    r.set_builder(trial.builder);
    r.set_agent(worker.registration.name());
    FinishTrial(job, trial, std::move(r));
  }
  MarkAgentFree(worker);
  DispatchMeasures(worker.registration.device_key(), received_at);
  DispatchBuilds(received_at);  // the host may be free to build again
}

void Scheduler::HandlePropose(Worker& worker, const proto::ProposeTrials& propose, double received_at) {
  auto it = jobs_.find(propose.job_id());
  if (it == jobs_.end() || it->second->tuner_worker != worker.id) {
    SendError(worker,
              absl::FailedPreconditionError(absl::StrCat("proposal for job \"", propose.job_id(),
                                                         "\", which this tuner does not hold")),
              false);
    return;
  }
  Job& job = *it->second;
  if (job.finished()) return;
  proto::TrackerMessage reply;
  proto::TrialsAccepted* accepted = reply.mutable_accepted();
  accepted->set_job_id(job.stored.job_id);
  std::vector<StoredTrial> rows;
  std::vector<Trial> created;
  absl::flat_hash_set<int64_t> seen;
  for (const auto& [id, t] : job.trials) seen.insert(t.config_index);
  int64_t next_id = static_cast<int64_t>(job.trials.size());
  for (const proto::ProposedConfig& pc : propose.configs()) {
    if (next_id >= job.stored.spec.n_trial()) {
      accepted->add_rejected(absl::StrCat("job already has all ", job.stored.spec.n_trial(), " trials"));
      continue;
    }
    absl::StatusOr<Config> config = job.task->space().FromJsonString(pc.config_json());
    if (!config.ok()) {
      accepted->add_rejected(absl::StrCat("config outside the space: ", config.status().message()));
      continue;
    }
    if (config->index() != pc.config_index()) {
      accepted->add_rejected(absl::StrCat("config_index ", pc.config_index(), " does not match the config (index ",
                                          config->index(), ")"));
      continue;
    }
    if (!seen.insert(config->index()).second) {
      accepted->add_rejected(absl::StrCat("config ", config->index(), " was already proposed in this job"));
      continue;
    }
    Trial t;
    t.id = next_id++;
    t.config_json = config->ToJson().dump();
    t.config_index = config->index();
    t.queued_at = received_at;
    StoredTrial row;
    row.job_id = job.stored.job_id;
    row.trial_id = t.id;
    row.config_json = t.config_json;
    row.config_index = t.config_index;
    rows.push_back(std::move(row));
    created.push_back(std::move(t));
  }
  if (!rows.empty()) {
    absl::Status stored = store_->PutTrials(rows);
    if (!stored.ok()) {
      // Nothing was acknowledged: the tuner will see these configs as
      // rejected and the job stays consistent.
      TF_LOG(ERROR) << "store failed for job " << job.stored.job_id << ": " << stored;
      for (size_t i = 0; i < created.size(); ++i) accepted->add_rejected(absl::StrCat("store: ", stored.message()));
      created.clear();
    }
  }
  for (Trial& t : created) {
    accepted->add_trial_ids(t.id);
    job.to_build.push_back(t.id);
    job.trials.emplace(t.id, std::move(t));
  }
  if (accepted->rejected_size() > 0) {
    if (metrics_ != nullptr) metrics_->Rejected("config");
    TF_LOG(WARNING) << "job " << job.stored.job_id << ": refused " << accepted->rejected_size()
                    << " proposed config(s), first: " << accepted->rejected(0);
  }
  worker.outbox->Send(std::move(reply));
  if (propose.finished() && !job.search_finished) {
    job.search_finished = true;
    job.finish_reason = propose.finish_reason();
    TF_LOG(INFO) << "job " << job.stored.job_id << ": the tuner ended the search (" << job.finish_reason << ")";
  }
  DispatchBuilds(received_at);
  MaybeFinishJob(job);
}

// ---------------------------------------------------------------- dispatch

void Scheduler::RecordDispatch(Stage stage, double since) {
  const double latency = std::max(0.0, clock_.steady() - since);
  if (metrics_ != nullptr) {
    metrics_->ObserveDispatch(stage == Stage::kBuild ? QueueStage::kBuild : QueueStage::kMeasure, latency);
  }
  if (stage != Stage::kMeasure) return;  // the ring (QueueSummary) is for measurements
  if (dispatch_ring_.size() < kDispatchRing) {
    dispatch_ring_.push_back(latency);
  } else {
    dispatch_ring_[dispatch_next_] = latency;
    dispatch_next_ = (dispatch_next_ + 1) % kDispatchRing;
  }
}

std::string Scheduler::NewLeaseId() { return absl::StrCat("L", next_lease_++); }

void Scheduler::DispatchBuilds(double since) {
  while (true) {
    // The builder with the most free slots.
    Worker* builder = nullptr;
    int best_free = 0;
    for (const std::string& id : builders_) {
      Worker& w = *workers_.at(id);
      if (w.isolating && !HostMayBuild(w.host)) continue;
      int free = std::max(1, w.registration.parallelism()) - static_cast<int>(w.leases.size());
      if (free > best_free) {
        best_free = free;
        builder = &w;
      }
    }
    if (builder == nullptr) return;
    Job* pick = nullptr;
    for (auto& [id, job] : jobs_) {
      if (job->finished() || job->to_build.empty()) continue;
      if (pick == nullptr || job->build_pass < pick->build_pass) pick = job.get();
    }
    if (pick == nullptr) return;
    Job& job = *pick;
    virtual_build_pass_ = std::max(virtual_build_pass_, job.build_pass);
    job.build_pass += job.stride();
    Trial& trial = job.trials.at(job.to_build.front());
    job.to_build.pop_front();
    const std::string lease_id = NewLeaseId();
    Lease lease;
    lease.job_id = job.stored.job_id;
    lease.trial_id = trial.id;
    lease.worker_id = builder->id;
    lease.stage = Stage::kBuild;
    lease.deadline = clock_.steady() + job.stored.spec.build_timeout_s() + options_.build_lease_grace_s;
    lease.host = builder->host;
    lease.isolating = builder->isolating;
    if (lease.isolating) ++host_builds_[lease.host];
    leases_.emplace(lease_id, lease);
    builder->leases.insert(lease_id);
    trial.state = TrialState::kBuilding;
    trial.lease_id = lease_id;
    ++job.building;
    proto::TrackerMessage m;
    proto::BuildRequest* b = m.mutable_build();
    b->set_lease_id(lease_id);
    b->set_job_id(job.stored.job_id);
    b->set_trial_id(trial.id);
    *b->mutable_task() = job.stored.spec.task();
    b->set_config_json(trial.config_json);
    b->set_timeout_s(job.stored.spec.build_timeout_s());
    builder->outbox->Send(std::move(m));
    RecordDispatch(Stage::kBuild, since);
  }
}

void Scheduler::MarkAgentFree(Worker& agent) {
  if (agent.free_listed || !agent.leases.empty()) return;
  agent.free_listed = true;
  free_agents_[agent.registration.device_key()].push_back(agent.id);
}

void Scheduler::DispatchMeasures(const std::string& device_key, double since) {
  auto free_it = free_agents_.find(device_key);
  if (free_it == free_agents_.end()) return;
  std::deque<std::string>& free = free_it->second;
  while (!free.empty()) {
    // The first free agent whose host is not building.
    auto eligible = std::find_if(free.begin(), free.end(), [this](const std::string& id) {
      const Worker& a = *workers_.at(id);
      return !a.isolating || HostMayMeasure(a.host);
    });
    if (eligible == free.end()) return;
    Job* pick = nullptr;
    for (auto& [id, job] : jobs_) {
      if (job->finished() || job->to_measure.empty() || job->stored.spec.device_key() != device_key) continue;
      if (pick == nullptr || job->measure_pass < pick->measure_pass) pick = job.get();
    }
    if (pick == nullptr) return;
    Job& job = *pick;
    double& vpass = virtual_measure_pass_[device_key];
    vpass = std::max(vpass, job.measure_pass);
    job.measure_pass += job.stride();
    Worker& agent = *workers_.at(*eligible);
    free.erase(eligible);
    agent.free_listed = false;
    Trial& trial = job.trials.at(job.to_measure.front());
    job.to_measure.pop_front();
    const std::string lease_id = NewLeaseId();
    Lease lease;
    lease.job_id = job.stored.job_id;
    lease.trial_id = trial.id;
    lease.worker_id = agent.id;
    lease.stage = Stage::kMeasure;
    lease.deadline = clock_.steady() + job.stored.spec.measure().timeout_s() + options_.measure_lease_grace_s;
    lease.host = agent.host;
    lease.isolating = agent.isolating;
    if (lease.isolating) ++host_measures_[lease.host];
    leases_.emplace(lease_id, lease);
    agent.leases.insert(lease_id);
    trial.state = TrialState::kMeasuring;
    trial.lease_id = lease_id;
    ++job.measuring;
    SendMeasure(agent, job, trial, !agent.artifacts_sent.contains(trial.artifact_hash));
    RecordDispatch(Stage::kMeasure, since);
  }
}

void Scheduler::SendMeasure(Worker& agent, Job& job, Trial& trial, bool with_bytes) {
  proto::TrackerMessage m;
  proto::MeasureRequest* req = m.mutable_measure();
  req->set_lease_id(trial.lease_id);
  req->set_job_id(job.stored.job_id);
  req->set_trial_id(trial.id);
  proto::RunRequest* run = req->mutable_run();
  run->set_workload_name(job.task->workload().name());
  run->set_workload_args_json(job.task->workload().args().dump());
  if (with_bytes) {
    run->set_shared_object(*trial.shared_object);
    agent.artifacts_sent.insert(trial.artifact_hash);
  }
  run->set_entry_name(trial.entry_name);
  run->set_artifact_hash(trial.artifact_hash);
  *run->mutable_options() = job.stored.spec.measure();
  agent.outbox->Send(std::move(m));
}

int Scheduler::AgentsOfKey(const std::string& key) const {
  int n = 0;
  for (const auto& [id, w] : workers_) {
    if (w->role() == proto::AGENT && w->registration.device_key() == key) ++n;
  }
  return n;
}

int32_t Scheduler::SuggestedWindow(const Job& job) const {
  if (job.stored.spec.window() > 0) return job.stored.spec.window();
  int agents = AgentsOfKey(job.stored.spec.device_key());
  int builders = 0;
  for (const std::string& id : builders_) builders += std::max(1, workers_.at(id)->registration.parallelism());
  // Enough to keep every agent of the key busy with one trial built ahead,
  // and every build slot fed.
  return std::clamp(2 * agents + builders, 2, options_.max_window);
}

void Scheduler::AssignJobs() {
  for (const std::string& id : job_order_) {
    Job& job = *jobs_.at(id);
    if (job.finished() || !job.tuner_worker.empty() || job.task == nullptr) continue;
    Worker* best = nullptr;
    for (const std::string& tid : tuners_) {
      Worker& t = *workers_.at(tid);
      int capacity = std::max(1, t.registration.parallelism());
      if (static_cast<int>(t.jobs.size()) >= capacity) continue;
      if (best == nullptr || t.jobs.size() < best->jobs.size()) best = &t;
    }
    if (best == nullptr) return;
    job.tuner_worker = best->id;
    best->jobs.insert(id);
    if (job.stored.state == proto::QUEUED) {
      job.stored.state = proto::RUNNING;
      if (job.stored.started_at == 0) job.stored.started_at = clock_.wall();
      absl::Status s = PersistJob(job);
      if (!s.ok()) {
    TF_LOG(ERROR) << "store failed for job " << id << ": " << s;
  }
      proto::JobEvent e;
      *e.mutable_status() = StatusOf(job);
      e.set_trial_id(-1);
      Notify(job, e);
    }
    TF_LOG(INFO) << "job " << id << " assigned to tuner " << best->id << " \"" << best->registration.name()
                 << "\" (" << job.done << " trials done, " << job.in_flight() << " in flight)";
    SendAssignment(*best, job);
  }
}

void Scheduler::SendAssignment(Worker& tuner, Job& job) {
  proto::TrackerMessage m;
  proto::JobAssignment* a = m.mutable_assignment();
  a->set_job_id(job.stored.job_id);
  *a->mutable_spec() = job.stored.spec;
  for (const auto& [id, t] : job.trials) {
    proto::KnownTrial* k = a->add_trials();
    k->set_trial_id(id);
    k->set_config_json(t.config_json);
    k->set_config_index(t.config_index);
    k->set_done(t.done);
    if (t.done) *k->mutable_result() = t.result;
  }
  a->set_suggested_window(SuggestedWindow(job));
  tuner.outbox->Send(std::move(m));
}

// ---------------------------------------------------------------- transitions

absl::Status Scheduler::PersistJob(const Job& job) { return store_->PutJob(job.stored); }

absl::Status Scheduler::PersistTrial(const Job& job, const Trial& trial, const std::string& record_line) {
  StoredTrial row;
  row.job_id = job.stored.job_id;
  row.trial_id = trial.id;
  row.config_json = trial.config_json;
  row.config_index = trial.config_index;
  row.attempts = trial.attempts;
  row.done = trial.done;
  row.result = trial.result;
  row.record_line = record_line;
  return store_->PutTrials({row});
}

void Scheduler::FinishTrial(Job& job, Trial& trial, proto::TrialResult result) {
  trial.done = true;
  trial.state = TrialState::kDone;
  trial.result = std::move(result);
  trial.shared_object.reset();
  trial.lease_id.clear();
  Record record;
  record.target = job.stored.spec.task().target();
  record.task_name = job.task->name();
  record.workload_name = job.task->workload().name();
  record.workload_args = job.task->workload().args();
  record.config = nlohmann::json::parse(trial.config_json, nullptr, false);
  record.result = ToMeasureResult(trial.result);
  absl::Status stored = PersistTrial(job, trial, record.ToLine());
  if (!stored.ok()) {
    // Not acknowledged: the trial is redone after a restart. Keep serving.
    TF_LOG(ERROR) << "store failed for job " << job.stored.job_id << " trial " << trial.id << ": " << stored;
  }
  ++job.done;
  if (metrics_ != nullptr) metrics_->TrialFinished(trial.result.error_no());
  const MeasureResult mr = ToMeasureResult(trial.result);
  if (!mr.ok()) {
    ++job.failed;
  } else {
    double cost = mr.MeanCost();
    if (job.best_cost == 0 || cost < job.best_cost) {
      job.best_cost = cost;
      job.best_config_json = trial.config_json;
    }
  }
  auto tuner = workers_.find(job.tuner_worker);
  if (tuner != workers_.end()) {
    proto::TrackerMessage m;
    proto::TrialUpdate* u = m.mutable_trial_update();
    u->set_job_id(job.stored.job_id);
    u->set_trial_id(trial.id);
    u->set_config_json(trial.config_json);
    u->set_config_index(trial.config_index);
    *u->mutable_result() = trial.result;
    u->set_suggested_window(SuggestedWindow(job));
    tuner->second->outbox->Send(std::move(m));
  }
  proto::JobEvent e;
  *e.mutable_status() = StatusOf(job);
  e.set_trial_id(trial.id);
  e.set_config_json(trial.config_json);
  *e.mutable_result() = trial.result;
  Notify(job, e);
  MaybeFinishJob(job);
}

void Scheduler::RequeueLease(const std::string& lease_id, const std::string& reason) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return;
  const Lease lease = it->second;
  EndLease(lease_id);
  auto job_it = jobs_.find(lease.job_id);
  if (job_it == jobs_.end()) return;
  Job& job = *job_it->second;
  Trial& trial = job.trials.at(lease.trial_id);
  if (lease.stage == Stage::kBuild) --job.building; else --job.measuring;
  if (job.finished() || trial.done) return;
  ++trial.attempts;
  if (metrics_ != nullptr) metrics_->Requeued(absl::StrContains(reason, "lease expired") ? RequeueReason::kLeaseExpired : RequeueReason::kWorkerLost);
  if (trial.attempts >= job.stored.spec.max_attempts()) {
    const bool building = lease.stage == Stage::kBuild;
    proto::TrialResult r = ErrorResult(
        building ? MeasureErrorNo::kCompileHost : MeasureErrorNo::kRuntimeDevice,
        absl::StrCat("gave up after ", trial.attempts, " attempts: the ", building ? "builder" : "agent",
                     " holding this trial was lost each time (last: ", reason, ")"),
        clock_.wall());
    r.set_build_seconds(trial.build_seconds);
    r.set_builder(trial.builder);
    FinishTrial(job, trial, std::move(r));
    return;
  }
  absl::Status stored = PersistTrial(job, trial, "");
  if (!stored.ok()) {
    TF_LOG(ERROR) << "store failed for job " << job.stored.job_id << ": " << stored;
  }
  TF_LOG(WARNING) << "job " << job.stored.job_id << " trial " << trial.id << " requeued for "
                  << StageName(static_cast<int>(lease.stage)) << " (attempt " << trial.attempts + 1 << " of "
                  << job.stored.spec.max_attempts() << "): " << reason;
  trial.lease_id.clear();
  trial.queued_at = clock_.steady();
  if (lease.stage == Stage::kMeasure && trial.shared_object != nullptr) {
    trial.state = TrialState::kToMeasure;
    job.to_measure.push_front(trial.id);
  } else {
    trial.state = TrialState::kToBuild;
    job.to_build.push_front(trial.id);
  }
}

void Scheduler::MaybeFinishJob(Job& job) {
  if (job.finished()) return;
  const int64_t n = job.stored.spec.n_trial();
  if (job.done >= n) {
    EndJob(job, proto::SUCCEEDED, absl::StrCat("all ", n, " trials done"));
  } else if (job.search_finished && job.in_flight() == 0) {
    EndJob(job, proto::SUCCEEDED,
           absl::StrCat("search ended after ", job.done, " of ", n, " trials: ", job.finish_reason));
  }
}

void Scheduler::EndJob(Job& job, proto::JobState state, const std::string& message) {
  job.stored.state = state;
  job.stored.message = message;
  job.stored.finished_at = clock_.wall();
  absl::Status s = PersistJob(job);
  if (!s.ok()) {
    TF_LOG(ERROR) << "store failed for job " << job.stored.job_id << ": " << s;
  }
  TF_LOG(INFO) << "job " << job.stored.job_id << " " << proto::JobState_Name(state) << ": " << message;
  // Queued work is dropped; leases in flight end when their results come
  // (ignored) or their worker is lost.
  for (int64_t id : job.to_build) job.trials.at(id).state = TrialState::kDone;
  for (int64_t id : job.to_measure) job.trials.at(id).shared_object.reset();
  job.to_build.clear();
  job.to_measure.clear();
  auto tuner = workers_.find(job.tuner_worker);
  if (tuner != workers_.end()) {
    tuner->second->jobs.erase(job.stored.job_id);
    proto::TrackerMessage m;
    m.mutable_released()->set_job_id(job.stored.job_id);
    m.mutable_released()->set_reason(message);
    tuner->second->outbox->Send(std::move(m));
  }
  job.tuner_worker.clear();
  proto::JobEvent e;
  *e.mutable_status() = StatusOf(job);
  e.set_trial_id(-1);
  Notify(job, e);
  for (const auto& [id, w] : job.watchers) watch_jobs_.erase(id);
  job.watchers.clear();
  AssignJobs();
}

proto::JobStatus Scheduler::StatusOf(const Job& job) const {
  proto::JobStatus s;
  s.set_job_id(job.stored.job_id);
  *s.mutable_spec() = job.stored.spec;
  s.set_state(job.stored.state);
  s.set_trials_done(job.done);
  s.set_trials_failed(job.failed);
  s.set_trials_in_flight(job.finished() ? 0 : job.in_flight());
  if (job.best_cost > 0 && job.task != nullptr) {
    s.set_best_gflops(job.task->workload().flops() / job.best_cost / 1e9);
    s.set_best_cost_s(job.best_cost);
    s.set_best_config_json(job.best_config_json);
  }
  s.set_message(job.stored.message);
  s.set_created_at(job.stored.created_at);
  s.set_started_at(job.stored.started_at);
  s.set_finished_at(job.stored.finished_at);
  auto tuner = workers_.find(job.tuner_worker);
  if (tuner != workers_.end()) s.set_tuner(tuner->second->registration.name());
  return s;
}

void Scheduler::Notify(Job& job, const proto::JobEvent& event) {
  for (auto it = job.watchers.begin(); it != job.watchers.end();) {
    if (!it->second(event)) {
      watch_jobs_.erase(it->first);
      it = job.watchers.erase(it);
    } else {
      ++it;
    }
  }
}

// ---------------------------------------------------------------- ticks

void Scheduler::Tick() {
  absl::MutexLock lock(&mu_);
  const double now = clock_.steady();
  std::vector<std::pair<std::string, std::string>> expired;  // worker, why
  for (const auto& [id, lease] : leases_) {
    if (lease.deadline < now) {
      expired.emplace_back(lease.worker_id,
                           absl::StrCat("lease expired: ", StageName(static_cast<int>(lease.stage)), " of job ",
                                        lease.job_id, " trial ", lease.trial_id, " overran its deadline"));
    }
  }
  for (const auto& [id, w] : workers_) {
    if (now - w->last_seen > options_.worker_timeout_s) {
      expired.emplace_back(id, absl::StrCat("silent for ", static_cast<int>(now - w->last_seen),
                                            " s (no heartbeat)"));
    }
  }
  for (const auto& [worker_id, why] : expired) {
    if (!workers_.contains(worker_id)) continue;
    DropWorker(worker_id, absl::DeadlineExceededError(why), /*close_stream=*/true);
  }
  if (now - last_gauge_refresh_ >= kGaugeRefreshS) {
    last_gauge_refresh_ = now;
    RefreshGauges();
  }
}

void Scheduler::RefreshGauges() {
  if (metrics_ == nullptr) return;
  const double now = clock_.steady();
  std::map<std::pair<int, std::string>, WorkerCount> counts;
  for (const auto& [id, w] : workers_) {
    WorkerRole role = w->role() == proto::BUILDER ? WorkerRole::kBuilder
                      : w->role() == proto::AGENT ? WorkerRole::kAgent
                                                  : WorkerRole::kTuner;
    WorkerCount& c = counts[{static_cast<int>(role), w->registration.device_key()}];
    c.role = role;
    c.device_key = w->registration.device_key();
    const int busy = w->role() == proto::TUNER ? static_cast<int>(w->jobs.size()) : static_cast<int>(w->leases.size());
    const int capacity = w->role() == proto::AGENT ? 1 : std::max(1, w->registration.parallelism());
    if (busy >= capacity) ++c.busy; else ++c.free;
  }
  std::vector<WorkerCount> workers;
  for (auto& [k, c] : counts) workers.push_back(c);
  metrics_->SetWorkers(workers);

  QueueStat build;
  build.stage = QueueStage::kBuild;
  std::map<std::string, QueueStat> measure;
  JobStats stats;
  std::map<std::string, double> best;
  for (const auto& [id, job] : jobs_) {
    switch (job->stored.state) {
      case proto::QUEUED: ++stats.queued; break;
      case proto::RUNNING: ++stats.running; break;
      case proto::SUCCEEDED: ++stats.succeeded; break;
      case proto::FAILED: ++stats.failed; break;
      case proto::CANCELLED: ++stats.cancelled; break;
      default: break;
    }
    if (job->best_cost > 0 && job->task != nullptr) {
      double& b = best[job->stored.spec.task().target()];
      b = std::max(b, job->task->workload().flops() / job->best_cost / 1e9);
    }
    if (job->finished()) continue;
    stats.trials_done += job->done;
    stats.trials_target += job->stored.spec.n_trial();
    build.depth += static_cast<int64_t>(job->to_build.size());
    if (!job->to_build.empty()) {
      build.oldest_age_seconds = std::max(build.oldest_age_seconds, now - job->trials.at(job->to_build.front()).queued_at);
    }
    QueueStat& q = measure[job->stored.spec.device_key()];
    q.stage = QueueStage::kMeasure;
    q.device_key = job->stored.spec.device_key();
    q.depth += static_cast<int64_t>(job->to_measure.size());
    if (!job->to_measure.empty()) {
      q.oldest_age_seconds = std::max(q.oldest_age_seconds, now - job->trials.at(job->to_measure.front()).queued_at);
    }
  }
  std::vector<QueueStat> queues = {build};
  for (auto& [k, q] : measure) queues.push_back(q);
  metrics_->SetQueues(queues);
  for (auto& [target, g] : best) stats.best_gflops.push_back({target, g});
  metrics_->SetJobs(stats);
}

}  // namespace tunefleet

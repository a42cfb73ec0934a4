#include "tuner_process/tuner_service.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace tunefleet {

absl::Status TunerServiceOptions::Validate() const {
  if (absl::Status valid = worker.Validate(); !valid.ok()) return valid;
  if (max_jobs < 1)
    return absl::InvalidArgumentError(absl::StrCat("max jobs must be >= 1, got ", max_jobs));
  return absl::OkStatus();
}

TunerService::TunerService(TunerServiceOptions options) : options_(std::move(options)) {
  proto::Register registration;
  registration.set_role(proto::TUNER);
  registration.set_parallelism(options_.max_jobs);
  registration.set_version("tunefleet-0.1");
  worker_ = std::make_unique<WorkerDaemon>(options_.worker, std::move(registration),
                                           static_cast<WorkerRoleInterface*>(this));
}

TunerService::~TunerService() { Stop(); }

void TunerService::Start() { worker_->Start(); }
void TunerService::Stop() { worker_->Stop(); }

int TunerService::jobs() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(runners_.size());
}

void TunerService::OnSession(const proto::Registered& registered) {
  const std::string& worker_id = registered.worker_id();
  absl::MutexLock lock(&mu_);
  if (!runners_.empty()) {
    TF_LOG(INFO) << "new session " << worker_id << ": dropping " << runners_.size()
                 << " job(s); the tracker reassigns them";
  }
  runners_.clear();
}

void TunerService::Propose(JobRunner& runner) {
  if (const absl::Status status = Pump(runner, *this); !status.ok()) {
    TF_LOG(ERROR) << "job " << runner.job_id() << ": " << status;  // Execute never fails
  }
}

[[nodiscard]] absl::StatusOr<bool> TunerService::Execute(JobRunner&,
                                                         const proto::ProposeTrials& proposals) {
  proto::WorkerMessage m;
  *m.mutable_propose() = proposals;
  worker_->Send(m);
  return false;
}

void TunerService::OnMessage(const proto::TrackerMessage& message) {
  absl::MutexLock lock(&mu_);
  switch (message.kind_case()) {
    case proto::TrackerMessage::kAssignment: {
      const proto::JobAssignment& a = message.assignment();
      // A warm start where the job names a family the project ships records
      // for; a cold one (with a warning) if they cannot be read.
      absl::StatusOr<JobRunner::FirstConfigFor> first_for =
          JobRunner::ShippedFirstConfigs(a.spec());
      if (!first_for.ok()) {
        TF_LOG(WARNING) << "job " << a.job_id() << " starts cold: " << first_for.status();
      }
      absl::StatusOr<PriorLookup> prior_for = JobRunner::ShippedPriors(a.spec());
      if (!prior_for.ok()) {
        TF_LOG(WARNING) << "job " << a.job_id()
                        << " tunes without a cost-model prior: " << prior_for.status();
      }
      absl::StatusOr<std::unique_ptr<JobRunner>> runner =
          JobRunner::Create(a, &clock_,
                            {.first_for = first_for.ok() ? *first_for : JobRunner::FirstConfigFor(),
                             .prior_for = prior_for.ok() ? *prior_for : PriorLookup()});
      if (!runner.ok()) {
        TF_LOG(ERROR) << "cannot run job " << a.job_id() << ": " << runner.status();
        proto::WorkerMessage m;
        m.mutable_propose()->set_job_id(a.job_id());
        m.mutable_propose()->set_finished(true);
        m.mutable_propose()->set_finish_reason(
            absl::StrCat("the tuner cannot run it: ", runner.status().message()));
        worker_->Send(m);
        return;
      }
      TF_LOG(INFO) << "took job " << a.job_id() << " (" << a.spec().tuner() << ", "
                   << a.spec().n_trial() << " trials, " << (*runner)->done() << " done, "
                   << (*runner)->in_flight() << " in flight, window " << a.suggested_window()
                   << ")";
      JobRunner& ref = **runner;
      runners_[a.job_id()] = *std::move(runner);
      Propose(ref);
      break;
    }
    case proto::TrackerMessage::kTrialUpdate: {
      auto it = runners_.find(message.trial_update().job_id());
      if (it == runners_.end()) return;
      it->second->OnTrialUpdate(message.trial_update());
      if (options_.log_progress && (it->second->done() % 8 == 0 || it->second->done() < 8)) {
        TF_LOG(INFO) << it->second->Progress();
      }
      Propose(*it->second);
      break;
    }
    case proto::TrackerMessage::kAccepted: {
      auto it = runners_.find(message.accepted().job_id());
      if (it == runners_.end()) return;
      it->second->OnAccepted(message.accepted());
      if (message.accepted().rejected_size() > 0) Propose(*it->second);
      break;
    }
    case proto::TrackerMessage::kReleased:
      if (runners_.erase(message.released().job_id()) > 0) {
        TF_LOG(INFO) << "job " << message.released().job_id()
                     << " released: " << message.released().reason();
      }
      break;
    case proto::TrackerMessage::kError:
      TF_LOG(WARNING) << "tracker: " << message.error().code() << ": " << message.error().message();
      break;
    default:
      break;
  }
}

}  // namespace tunefleet

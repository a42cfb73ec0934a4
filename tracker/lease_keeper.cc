#include "tracker/lease_keeper.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"

namespace tunefleet {

std::string LeaseKeeper::Grant(Job& job, Trial& trial, Worker& worker, Stage stage,
                               double deadline) {
  const std::string lease_id =
      tokens_.has_value()
          ? tokens_->Mint({job.stored.job_id, trial.id, stage}, worker.registration.name())
          : absl::StrCat("L", next_lease_++);
  Lease lease;
  lease.job_id = job.stored.job_id;
  lease.trial_id = trial.id;
  lease.worker_id = worker.id;
  lease.stage = stage;
  lease.deadline = deadline;
  lease.host = worker.host;
  lease.isolating = worker.isolating;
  if (lease.isolating) ++(stage == Stage::kBuild ? host_builds_ : host_measures_)[lease.host];
  leases_.emplace(lease_id, std::move(lease));
  worker.leases.insert(lease_id);
  trial.state = stage == Stage::kBuild ? TrialState::kBuilding : TrialState::kMeasuring;
  trial.lease_id = lease_id;
  ++(stage == Stage::kBuild ? job.building : job.measuring);
  return lease_id;
}

const Lease* LeaseKeeper::Find(const Worker& worker, const std::string& lease_id,
                               Stage stage) const {
  auto it = leases_.find(lease_id);
  if (it == leases_.end() || it->second.worker_id != worker.id || it->second.stage != stage)
    return nullptr;
  return &it->second;
}

absl::StatusOr<LeaseClaim> LeaseKeeper::Claim(const Worker& worker,
                                              const std::string& lease_id) const {
  if (!tokens_.has_value()) {
    return absl::FailedPreconditionError("this tracker signs no lease ids");
  }
  return tokens_->Verify(lease_id, worker.registration.name());
}

void LeaseKeeper::Revoke(const std::string& lease_id, const std::string& reason) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end() || it->second.revoked) return;
  it->second.revoked = true;
  if (it->second.stage == Stage::kMeasure) {
    if (Worker* agent = workers_->Find(it->second.worker_id)) {
      proto::TrackerMessage m;
      m.mutable_abort_measure()->set_lease_id(lease_id);
      m.mutable_abort_measure()->set_reason(reason);
      agent->outbox->Send(std::move(m));
    }
  }
}

void LeaseKeeper::End(const std::string& lease_id) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return;
  const Lease& lease = it->second;
  if (lease.isolating) {
    int& n = (lease.stage == Stage::kBuild ? host_builds_ : host_measures_)[lease.host];
    n = std::max(0, n - 1);
  }
  if (Worker* worker = workers_->Find(lease.worker_id)) worker->leases.erase(lease_id);
  if (Job* job = jobs_->Find(lease.job_id))
    --(lease.stage == Stage::kBuild ? job->building : job->measuring);
  leases_.erase(it);
}

void LeaseKeeper::RequeueAllOf(const Worker& worker, const std::string& reason,
                               RequeueReason kind) {
  const std::set<std::string> held = worker.leases;
  for (const std::string& lease_id : held) Requeue(lease_id, reason, kind);
}

std::vector<std::pair<std::string, std::string>> LeaseKeeper::Expired(double now) const {
  std::vector<std::pair<std::string, std::string>> expired;
  for (const auto& [id, lease] : leases_) {
    if (lease.deadline < now) {
      expired.emplace_back(lease.worker_id, absl::StrCat("lease expired: ", StageName(lease.stage),
                                                         " of job ", lease.job_id, " trial ",
                                                         lease.trial_id, " overran its deadline"));
    }
  }
  return expired;
}

int LeaseKeeper::AbortMeasuresOf(const std::string& job_id, const std::string& reason) {
  int aborted = 0;
  for (const auto& [id, lease] : leases_) {
    if (lease.job_id != job_id || lease.stage != Stage::kMeasure) continue;
    Worker* agent = workers_->Find(lease.worker_id);
    if (agent == nullptr) continue;
    proto::TrackerMessage m;
    m.mutable_abort_measure()->set_lease_id(id);
    m.mutable_abort_measure()->set_reason(reason);
    agent->outbox->Send(std::move(m));
    ++aborted;
  }
  return aborted;
}

void LeaseKeeper::ForgiveStall(double seconds) {
  for (auto& [id, lease] : leases_) lease.deadline += seconds;
}

void LeaseKeeper::Requeue(const std::string& lease_id, const std::string& reason,
                          RequeueReason kind) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return;
  const Lease lease = it->second;
  End(lease_id);
  if (lease.revoked) return;  // its trial went on without it
  Job* job = jobs_->Find(lease.job_id);
  if (job == nullptr) return;
  Trial& trial = job->trials.at(lease.trial_id);
  if (job->finished() || trial.done) return;
  ++trial.attempts;
  if (metrics_ != nullptr) metrics_->Requeued(kind);
  if (trial.attempts >= job->stored.spec.max_attempts()) {
    lifecycle_->GiveUp(*job, trial, lease.stage, reason);
  } else {
    lifecycle_->Requeue(*job, trial, lease.stage, reason);
  }
}

int LeaseKeeper::CountOn(const std::map<std::string, int>& counts, const std::string& host) {
  auto it = counts.find(host);
  return it == counts.end() ? 0 : it->second;
}

}  // namespace tunefleet

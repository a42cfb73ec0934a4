// Per-user quotas (proto::UserQuota, copied from the owner's token line into
// each job it submits as JobSpec.owner_quota) as the scheduler enforces
// them:
//   - jobs in flight: SubmitJob refuses one more (ResourceExhausted);
//   - trials per hour: builds dispatched for the owner's jobs in the trailing
//     hour; at the quota its jobs' builds wait;
//   - agent share: trials of the owner's jobs being measured on a key, at
//     most ceil(share x the key's agents) (at least 1); the rest wait.
// A job's own quota applies to it (a job submitted before the token line
// changed keeps the quota it was given). The hourly counts live in memory:
// a restarted tracker starts them at zero.
//
//   UserQuotas quotas;
//   TF_RETURN_IF_ERROR(UserQuotas::CheckSubmit(jobs, spec));
//   if (!quotas.BuildHold(job, now).empty()) continue;  // this job waits
//   quotas.RecordBuild(job.stored.spec.owner(), now);
#ifndef TUNEFLEET_TRACKER_USER_QUOTAS_H_
#define TUNEFLEET_TRACKER_USER_QUOTAS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/fleet.pb.h"
#include "tracker/job_table.h"

namespace tunefleet {

class UserQuotas {
 public:
  // ResourceExhausted, naming the user and the quota, when `spec`'s owner
  // already has spec.owner_quota().max_jobs_in_flight jobs queued or running.
  [[nodiscard]] static absl::Status CheckSubmit(const JobTable& jobs, const proto::JobSpec& spec);

  // A build of `user`'s was dispatched at steady time `now`.
  void RecordBuild(const std::string& user, double now);
  // Builds of `user`'s dispatched in the hour before `now`.
  int64_t TrialsLastHour(const std::string& user, double now) const;

  // Why `job` may not have another build dispatched now ("trials_per_hour"),
  // or "" when it may.
  std::string BuildHold(const Job& job, double now) const;
  // Why `job` may not have another measurement on its key, whose agents
  // number `agents_of_key` ("agent_share"), or "" when it may.
  static std::string MeasureHold(const JobTable& jobs, const Job& job, int agents_of_key);

  // One entry per user with jobs in flight (for `queue`): its counts, its
  // quota (its latest job's) and what holds its work back now.
  std::vector<proto::UserSummary> Summaries(const JobTable& jobs,
                                            const std::map<std::string, int>& agents_by_key,
                                            double now) const;

 private:
  // Dispatch times of each user's builds in the trailing hour, oldest first.
  mutable std::map<std::string, std::deque<double>> builds_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_USER_QUOTAS_H_

#include "tracker/user_quotas.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

constexpr double kHourS = 3600;

// Trials of `owner`'s unfinished jobs of `device_key` being measured now.
int64_t MeasuringOnKey(const JobTable& jobs, const std::string& owner,
                       const std::string& device_key) {
  int64_t measuring = 0;
  for (const auto& [id, job] : jobs.by_id()) {
    if (!job->finished() && job->stored.spec.owner() == owner &&
        job->stored.spec.device_key() == device_key) {
      measuring += job->measuring;
    }
  }
  return measuring;
}

int64_t AgentsAllowed(double share, int agents_of_key) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(share * agents_of_key - 1e-9)));
}

}  // namespace

absl::Status UserQuotas::CheckSubmit(const JobTable& jobs, const proto::JobSpec& spec) {
  const int32_t limit = spec.owner_quota().max_jobs_in_flight();
  if (limit <= 0 || spec.owner().empty()) return absl::OkStatus();
  int32_t in_flight = 0;
  for (const auto& [id, job] : jobs.by_id()) {
    if (!job->finished() && job->stored.spec.owner() == spec.owner()) ++in_flight;
  }
  if (in_flight < limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "user ", spec.owner(), " has ", in_flight, " jobs queued or running, its quota (jobs=", limit,
      " on its token line); wait for one to finish or cancel one"));
}

void UserQuotas::RecordBuild(const std::string& user, double now) { builds_[user].push_back(now); }

int64_t UserQuotas::TrialsLastHour(const std::string& user, double now) const {
  auto it = builds_.find(user);
  if (it == builds_.end()) return 0;
  std::deque<double>& times = it->second;
  while (!times.empty() && times.front() <= now - kHourS) times.pop_front();
  return static_cast<int64_t>(times.size());
}

std::string UserQuotas::BuildHold(const Job& job, double now) const {
  const int64_t limit = job.stored.spec.owner_quota().max_trials_per_hour();
  if (limit <= 0) return "";
  return TrialsLastHour(job.stored.spec.owner(), now) >= limit ? "trials_per_hour" : "";
}

std::string UserQuotas::MeasureHold(const JobTable& jobs, const Job& job, int agents_of_key) {
  const double share = job.stored.spec.owner_quota().max_agent_share();
  if (share <= 0) return "";
  const std::string& key = job.stored.spec.device_key();
  return MeasuringOnKey(jobs, job.stored.spec.owner(), key) >= AgentsAllowed(share, agents_of_key)
             ? absl::StrCat("agent_share on ", key)
             : "";
}

std::vector<proto::UserSummary> UserQuotas::Summaries(
    const JobTable& jobs, const std::map<std::string, int>& agents_by_key, double now) const {
  std::map<std::string, proto::UserSummary> users;
  for (const std::string& id : jobs.submission_order()) {
    const Job& job = *jobs.by_id().at(id);
    if (job.finished()) continue;
    const std::string& owner = job.stored.spec.owner();
    proto::UserSummary& u = users[owner];
    u.set_user(owner);
    u.set_jobs_in_flight(u.jobs_in_flight() + 1);
    u.set_measuring(u.measuring() + job.measuring);
    *u.mutable_quota() = job.stored.spec.owner_quota();  // the latest job's
    if (u.held().empty() && (!job.to_build.empty() || !job.to_measure.empty())) {
      std::string held = job.to_build.empty() ? "" : BuildHold(job, now);
      if (held.empty() && !job.to_measure.empty()) {
        auto agents = agents_by_key.find(job.stored.spec.device_key());
        held = MeasureHold(jobs, job, agents == agents_by_key.end() ? 0 : agents->second);
      }
      u.set_held(held);
    }
  }
  std::vector<proto::UserSummary> out;
  for (auto& [owner, u] : users) {
    u.set_trials_last_hour(TrialsLastHour(owner, now));
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace tunefleet

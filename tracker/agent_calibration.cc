#include "tracker/agent_calibration.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/logging.h"
#include "common/median.h"

namespace tunefleet {
namespace {

std::string Percent(double fraction) { return absl::StrFormat("%.1f %%", 100 * fraction); }

}  // namespace

absl::Status CalibrationPolicy::Validate() const {
  auto in = [](const char* name, double value, double low, double high) -> absl::Status {
    if (std::isfinite(value) && value > low && value <= high) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("calibration policy: ", name, " must be in (",
                                                   low, ", ", high, "], got ", value));
  };
  for (absl::Status s :
       {in("max_noise", max_noise, 0, 1), in("noisier_factor", noisier_factor, 1, 1e6),
        in("min_noise_for_relative", min_noise_for_relative, 0, 1),
        in("min_relative_speed", min_relative_speed, 0, 1), in("max_drift", max_drift, 0, 1),
        in("interval_s", interval_s, 0, 1e9), in("recheck_s", recheck_s, 0, 1e9)}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

std::string QuarantineReason(const proto::Calibration& latest, double baseline_gflops,
                             const std::vector<proto::Calibration>& others,
                             const CalibrationPolicy& policy) {
  if (!latest.error().empty()) return absl::StrCat("calibration failed: ", latest.error());
  if (!(latest.gflops() > 0) || !std::isfinite(latest.gflops()) || !(latest.noise() >= 0) ||
      !std::isfinite(latest.noise())) {
    return absl::StrCat("calibration reported an impossible figure (", latest.gflops(),
                        " GFLOPS, spread ", latest.noise(), ")");
  }
  if (latest.noise() > policy.max_noise) {
    return absl::StrCat("noisy: calibration spread ", Percent(latest.noise()), " > ",
                        Percent(policy.max_noise));
  }
  std::vector<double> speeds, noises;
  for (const proto::Calibration& other : others) {
    if (!other.error().empty() || !(other.gflops() > 0)) continue;
    speeds.push_back(other.gflops());
    noises.push_back(other.noise());
  }
  if (!noises.empty()) {
    const double key_noise = Median(noises);
    if (latest.noise() > policy.min_noise_for_relative &&
        latest.noise() > policy.noisier_factor * key_noise) {
      return absl::StrCat("noisy: calibration spread ", Percent(latest.noise()), " is more than ",
                          policy.noisier_factor, "x its key's median (", Percent(key_noise), ")");
    }
    const double key_speed = Median(speeds);
    if (latest.gflops() < policy.min_relative_speed * key_speed) {
      return absl::StrFormat(
          "slow: calibration %.2f GFLOPS is %.2fx its key's median (%.2f GFLOPS of %d other "
          "agent(s)), below %.2fx",
          latest.gflops(), latest.gflops() / key_speed, key_speed, static_cast<int>(speeds.size()),
          policy.min_relative_speed);
    }
  }
  if (baseline_gflops > 0 && std::abs(latest.gflops() / baseline_gflops - 1) > policy.max_drift) {
    return absl::StrFormat(
        "drifted: calibration %.2f GFLOPS is %+.1f %% from its first figure (%.2f GFLOPS), more "
        "than %.1f %%",
        latest.gflops(), 100 * (latest.gflops() / baseline_gflops - 1), baseline_gflops,
        100 * policy.max_drift);
  }
  return "";
}

void AgentCalibrations::Admit(Worker& agent) {
  if (agent.registration.calibrates()) {
    Want(agent, "registered");
    RequestWanted();
  } else {
    dispatcher_->MarkAgentFree(agent);
  }
}

absl::Status AgentCalibrations::Calibrated(Worker& agent, const proto::Calibration& calibration,
                                           double now, double wall) {
  if (!agent.calibrating) {
    return absl::FailedPreconditionError(
        "a calibration this agent was not asked for (figures are taken only when the tracker "
        "knows the host is quiet)");
  }
  agent.calibrating = false;
  agent.calibrated_at = now;
  proto::Calibration kept = calibration;
  kept.set_measured_at(wall);
  const std::string& key = agent.registration.device_key();
  const std::string reason =
      QuarantineReason(kept, agent.baseline_gflops, OthersOf(agent), *policy_);
  agent.calibration = kept;
  if (metrics_ != nullptr) metrics_->AgentCalibrated(key, !reason.empty());
  Judge(agent, reason);
  // The key's others are judged again against the new figure (a faster
  // board joining shows the old ones slow at once, not at their next
  // calibration), on their own latest figures.
  for (const auto& [id, other] : workers_->all()) {
    if (id == agent.id || other->role() != proto::AGENT ||
        other->registration.device_key() != key || !other->calibration.has_value() ||
        other->calibrating) {
      continue;
    }
    Judge(*other, QuarantineReason(*other->calibration, other->baseline_gflops, OthersOf(*other),
                                   *policy_));
  }
  RequestWanted();  // the next agent of this host waiting for its turn
  return absl::OkStatus();
}

std::vector<proto::Calibration> AgentCalibrations::OthersOf(const Worker& agent) const {
  std::vector<proto::Calibration> others;
  for (const auto& [id, other] : workers_->all()) {
    if (id == agent.id || other->role() != proto::AGENT ||
        other->registration.device_key() != agent.registration.device_key() ||
        !other->calibration.has_value()) {
      continue;
    }
    others.push_back(*other->calibration);
  }
  return others;
}

void AgentCalibrations::Judge(Worker& agent, const std::string& reason) {
  const proto::Calibration& kept = *agent.calibration;
  const std::string figures =
      kept.error().empty()
          ? absl::StrFormat("%.2f GFLOPS, spread %.2f %%", kept.gflops(), 100 * kept.noise())
          : "no figures";
  if (!reason.empty()) {
    if (agent.quarantine.empty()) {
      TF_LOG(WARNING) << "agent " << agent.id << " \"" << agent.registration.name() << "\" (key "
                      << agent.registration.device_key() << ") quarantined: " << reason;
    }
    agent.quarantine = reason;
    dispatcher_->Forget(agent);  // out of the free list (a lease it holds ends as usual)
    agent.free_listed = false;
    return;
  }
  if (agent.baseline_gflops <= 0) agent.baseline_gflops = kept.gflops();
  if (!agent.quarantine.empty()) {
    TF_LOG(INFO) << "agent " << agent.id << " \"" << agent.registration.name()
                 << "\" leaves quarantine: calibration passed (" << figures << ")";
  }
  agent.quarantine.clear();
  dispatcher_->MarkAgentFree(agent);
}

void AgentCalibrations::RequestDue(double now) {
  std::vector<Worker*> due;
  for (const auto& [id, worker] : workers_->all()) {
    Worker& agent = *worker;
    if (agent.role() != proto::AGENT || !agent.registration.calibrates() || agent.calibrating ||
        agent.calibration_wanted || !agent.leases.empty()) {
      continue;
    }
    const bool quarantined = !agent.quarantine.empty();
    if (!quarantined && !agent.free_listed) continue;
    const double every = quarantined ? policy_->recheck_s : policy_->interval_s;
    if (now - agent.calibrated_at < every) continue;
    due.push_back(&agent);
  }
  // Longest since its last calibration first (then by name): a fixed order.
  std::sort(due.begin(), due.end(), [](const Worker* a, const Worker* b) {
    return std::make_pair(a->calibrated_at, a->registration.name()) <
           std::make_pair(b->calibrated_at, b->registration.name());
  });
  for (Worker* agent : due)
    Want(*agent, agent->quarantine.empty() ? "periodic" : "quarantine recheck");
  RequestWanted();
}

void AgentCalibrations::Want(Worker& agent, const std::string& why) {
  dispatcher_->Forget(agent);
  agent.free_listed = false;
  agent.calibration_wanted = true;
  agent.calibration_reason = why;
  wanted_.push_back(agent.id);
}

void AgentCalibrations::RequestWanted() {
  // In the order they came to want one, so that agents sharing a host take
  // turns; ids of agents that left are dropped.
  for (auto it = wanted_.begin(); it != wanted_.end();) {
    Worker* agent = workers_->Find(*it);
    if (agent == nullptr || !agent->calibration_wanted) {
      it = wanted_.erase(it);
    } else if (HostQuiet(*agent)) {
      Request(*agent);
      it = wanted_.erase(it);
    } else {
      ++it;
    }
  }
}

bool AgentCalibrations::HostQuiet(const Worker& agent) const {
  if (!agent.isolating) return true;
  if (leases_->BuildsOn(agent.host) > 0 || leases_->MeasuresOn(agent.host) > 0) return false;
  for (const std::string& other : workers_->IsolatingAgentsOn(agent.host)) {
    if (other != agent.id && workers_->all().at(other)->calibrating) return false;
  }
  return true;
}

void AgentCalibrations::Request(Worker& agent) {
  agent.calibration_wanted = false;
  agent.calibrating = true;
  proto::TrackerMessage m;
  m.mutable_calibrate()->set_reason(agent.calibration_reason);
  agent.outbox->Send(std::move(m));
}

}  // namespace tunefleet

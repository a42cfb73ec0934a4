#include "tracker/worker_registry.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tunefleet {

int Worker::busy_units() const {
  return role() == proto::TUNER ? static_cast<int>(jobs.size()) : static_cast<int>(leases.size());
}

int Worker::capacity() const {
  return role() == proto::AGENT ? 1 : std::max(1, registration.parallelism());
}

absl::Status WorkerRegistry::ValidateRegistration(const proto::Register& registration) {
  if (registration.name().empty()) return absl::InvalidArgumentError("Register.name is empty");
  if (registration.name().size() > 256)
    return absl::InvalidArgumentError("Register.name is longer than 256 bytes");
  switch (registration.role()) {
    case proto::AGENT:
      if (registration.device_key().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("agent \"", registration.name(), "\" registered without a device_key"));
      }
      return absl::OkStatus();
    case proto::BUILDER:
    case proto::TUNER:
      if (registration.parallelism() < 0)
        return absl::InvalidArgumentError("Register.parallelism < 0");
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("worker \"", registration.name(), "\" registered without a role"));
  }
}

Worker& WorkerRegistry::Add(const proto::Register& registration, const std::string& peer,
                            std::shared_ptr<Outbox> outbox, double now, double wall) {
  auto worker = std::make_unique<Worker>();
  worker->id = absl::StrCat("w", next_worker_++);
  worker->registration = registration;
  worker->peer = peer;
  worker->outbox = std::move(outbox);
  worker->connected_at = wall;
  worker->last_seen = now;
  worker->host = HostOfPeer(peer);
  worker->isolating = isolate_measurements_ && (registration.role() == proto::BUILDER ||
                                                registration.role() == proto::AGENT);
  Worker& w = *worker;
  workers_.emplace(w.id, std::move(worker));
  by_name_[registration.name()] = w.id;
  if (w.isolating && w.role() == proto::AGENT) host_agents_[w.host].insert(w.id);
  if (w.role() == proto::BUILDER) builders_.insert(w.id);
  if (w.role() == proto::TUNER) tuners_.insert(w.id);
  if (w.role() == proto::AGENT) {
    KeyAgents& key = keys_[registration.device_key()];
    key.ids.insert(w.id);
    if (!registration.device().llvm_cpu().empty())
      ++key.llvm_cpus[registration.device().llvm_cpu()];
  }
  return w;
}

std::unique_ptr<Worker> WorkerRegistry::Remove(const std::string& worker_id) {
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return nullptr;
  std::unique_ptr<Worker> worker = std::move(it->second);
  workers_.erase(it);
  auto by_name = by_name_.find(worker->registration.name());
  if (by_name != by_name_.end() && by_name->second == worker_id) by_name_.erase(by_name);
  builders_.erase(worker_id);
  tuners_.erase(worker_id);
  if (auto h = host_agents_.find(worker->host); h != host_agents_.end()) h->second.erase(worker_id);
  if (worker->role() == proto::AGENT) {
    auto key = keys_.find(worker->registration.device_key());
    if (key != keys_.end()) {
      key->second.ids.erase(worker_id);
      const std::string& cpu = worker->registration.device().llvm_cpu();
      if (auto votes = key->second.llvm_cpus.find(cpu);
          votes != key->second.llvm_cpus.end() && --votes->second == 0) {
        key->second.llvm_cpus.erase(votes);
      }
      if (key->second.ids.empty()) keys_.erase(key);
    }
  }
  return worker;
}

Worker* WorkerRegistry::Find(const std::string& worker_id) {
  auto it = workers_.find(worker_id);
  return it == workers_.end() ? nullptr : it->second.get();
}

Worker* WorkerRegistry::FindByName(const std::string& name) {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : Find(it->second);
}

std::string WorkerRegistry::NameOf(const std::string& worker_id) const {
  auto it = workers_.find(worker_id);
  return it == workers_.end() ? "" : it->second->registration.name();
}

const std::set<std::string>& WorkerRegistry::IsolatingAgentsOn(const std::string& host) const {
  static const std::set<std::string>* const kNone = new std::set<std::string>();
  auto it = host_agents_.find(host);
  return it == host_agents_.end() ? *kNone : it->second;
}

const std::set<std::string>& WorkerRegistry::AgentIdsOfKey(const std::string& device_key) const {
  static const std::set<std::string>* const kNone = new std::set<std::string>();
  auto it = keys_.find(device_key);
  return it == keys_.end() ? *kNone : it->second.ids;
}

int WorkerRegistry::AgentsOfKey(const std::string& device_key) const {
  return static_cast<int>(AgentIdsOfKey(device_key).size());
}

std::string WorkerRegistry::QuarantineOfKey(const std::string& device_key) const {
  std::string first;
  for (const std::string& id : AgentIdsOfKey(device_key)) {
    const Worker& w = *workers_.at(id);
    if (w.quarantine.empty()) return "";
    if (first.empty()) first = w.quarantine;
  }
  return first;
}

std::string WorkerRegistry::LlvmCpuOfKey(const std::string& device_key) const {
  auto key = keys_.find(device_key);
  if (key == keys_.end()) return "";
  std::string best;
  int most = 0;
  for (const auto& [cpu, n] : key->second.llvm_cpus) {
    if (n > most) {
      best = cpu;
      most = n;
    }
  }
  return best;
}

int32_t WorkerRegistry::SuggestedWindow(const proto::JobSpec& spec, int max_window) const {
  if (spec.window() > 0) return spec.window();
  const int agents = AgentsOfKey(spec.device_key());
  int build_slots = 0;
  for (const std::string& id : builders_) build_slots += workers_.at(id)->capacity();
  return std::clamp(2 * agents + build_slots, 2, max_window);
}

void WorkerRegistry::ForgiveStall(double seconds) {
  for (auto& [id, w] : workers_) w->last_seen += seconds;
}

std::vector<std::pair<std::string, std::string>> WorkerRegistry::Silent(double now,
                                                                        double timeout_s) const {
  std::vector<std::pair<std::string, std::string>> silent;
  for (const auto& [id, w] : workers_) {
    if (now - w->last_seen > timeout_s) {
      silent.emplace_back(id, absl::StrCat("silent for ", static_cast<int>(now - w->last_seen),
                                           " s (no heartbeat)"));
    }
  }
  return silent;
}

proto::ListDevicesResponse WorkerRegistry::ListDevices() const {
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
    s->set_leases(w->busy_units());
    s->set_state(!w->quarantine.empty()                    ? "quarantined"
                 : w->calibrating || w->calibration_wanted ? "calibrating"
                 : w->busy_units() >= w->capacity()        ? "busy"
                                                           : "free");
    if (w->calibration.has_value()) *s->mutable_calibration() = *w->calibration;
    s->set_baseline_gflops(w->baseline_gflops);
    s->set_quarantine(w->quarantine);
    s->set_connected_at(w->connected_at);
    s->set_peer(w->peer);
    s->set_completed(w->completed);
  }
  return response;
}

WorkerRole MetricsRole(proto::WorkerRole role) {
  return role == proto::BUILDER ? WorkerRole::kBuilder
         : role == proto::AGENT ? WorkerRole::kAgent
                                : WorkerRole::kTuner;
}

std::string HostOfPeer(const std::string& peer) {
  std::string p = peer;
  for (const char* prefix : {"ipv4:", "ipv6:"}) {
    if (absl::StartsWith(p, prefix)) p = p.substr(strlen(prefix));
  }
  size_t colon = p.rfind(':');
  if (colon != std::string::npos && !p.empty() &&
      (p.front() == '[' ? p.find(']') < colon : p.find(':') == colon)) {
    p = p.substr(0, colon);
  }
  return p;
}

}  // namespace tunefleet

// WorkerRegistry: the workers connected to the tracker (builders, agents,
// tuners), each with its registration, its stream's Outbox, the leases and
// jobs it holds and when it was last heard from; looked up by id and by
// name. It also answers what the fleet looks like: ListDevices, the agents
// of a device key, the window a tuner should keep in flight, the workers
// gone silent.
//
// Data only: registering, dropping and dispatching are done by the Scheduler
// facade and the Dispatcher. Not thread-safe: the Scheduler facade calls
// everything under its one mutex.
#ifndef TUNEFLEET_TRACKER_WORKER_REGISTRY_H_
#define TUNEFLEET_TRACKER_WORKER_REGISTRY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "proto/fleet.pb.h"
#include "tracker/metrics_interface.h"
#include "tracker/outbox.h"

namespace tunefleet {

struct Worker {
  std::string id;
  proto::Register registration;  // as registered, never changed: the registry indexes it
  std::string peer;
  std::shared_ptr<Outbox> outbox;
  std::set<std::string> leases;
  std::set<std::string> jobs;                       // tuners: jobs held
  absl::flat_hash_set<std::string> artifacts_sent;  // agents: hashes sent
  double connected_at = 0;                          // wall
  double last_seen = 0;                             // steady
  int64_t completed = 0;
  bool free_listed = false;  // agents: in the Dispatcher's free list of its key
  std::string host;          // peer address without the port
  bool isolating = false;    // takes part in measurement isolation
  // Agents that calibrate (tracker/agent_calibration.h): owing one (asked
  // once the host is quiet) and why; running one now; the latest figures
  // and when (steady); the first passing figure; and, when quarantined, why
  // ("" when not).
  bool calibration_wanted = false;
  std::string calibration_reason;
  bool calibrating = false;
  std::optional<proto::Calibration> calibration;
  double calibrated_at = 0;
  double baseline_gflops = 0;
  std::string quarantine;

  proto::WorkerRole role() const { return registration.role(); }
  // Jobs held (tuners) or leases held (builders, agents), against what it
  // can hold at once (agents 1, others their parallelism, at least 1).
  int busy_units() const;
  int capacity() const;
};

class WorkerRegistry {
 public:
  // `isolate_measurements`: SchedulerOptions::isolate_measurements.
  explicit WorkerRegistry(bool isolate_measurements)
      : isolate_measurements_(isolate_measurements) {}

  // InvalidArgument for a registration without a name, a role, or (agents)
  // a device key.
  [[nodiscard]] static absl::Status ValidateRegistration(const proto::Register& registration);

  // Adds a worker with a new id; `now` is steady time, `wall` unix time.
  Worker& Add(const proto::Register& registration, const std::string& peer,
              std::shared_ptr<Outbox> outbox, double now, double wall);
  // Removes and returns the worker (null if unknown).
  std::unique_ptr<Worker> Remove(const std::string& worker_id);

  Worker* Find(const std::string& worker_id);
  Worker* FindByName(const std::string& name);
  // The worker's name, "" if there is none with this id.
  std::string NameOf(const std::string& worker_id) const;

  const absl::flat_hash_map<std::string, std::unique_ptr<Worker>>& all() const { return workers_; }
  const std::set<std::string>& builders() const { return builders_; }
  const std::set<std::string>& tuners() const { return tuners_; }
  // Isolating agents connected from `host`.
  const std::set<std::string>& IsolatingAgentsOn(const std::string& host) const;

  // The agents of `device_key` (ids), from an index kept by Add and Remove:
  // a fleet of 10,000 agents is not walked per message.
  const std::set<std::string>& AgentIdsOfKey(const std::string& device_key) const;
  int AgentsOfKey(const std::string& device_key) const;
  // When every agent of `device_key` is quarantined (and there is one), the
  // first one's reason; else "".
  std::string QuarantineOfKey(const std::string& device_key) const;
  // The LLVM CPU the agents of `device_key` report (DeviceInfo.llvm_cpu),
  // the one most of them report; "" when none is connected or none says.
  std::string LlvmCpuOfKey(const std::string& device_key) const;
  // Trials a tuner should keep in flight for a job with `spec`: its window,
  // or enough to keep every agent of its key busy with one trial built ahead
  // and every build slot fed, in [2, max_window].
  int32_t SuggestedWindow(const proto::JobSpec& spec, int max_window) const;
  // (worker id, why) of every worker not heard from for more than `timeout_s`.
  // Every worker's last_seen `seconds` later (the tracker stalled that
  // long and could hear nobody).
  void ForgiveStall(double seconds);
  std::vector<std::pair<std::string, std::string>> Silent(double now, double timeout_s) const;

  proto::ListDevicesResponse ListDevices() const;

 private:
  const bool isolate_measurements_;
  absl::flat_hash_map<std::string, std::unique_ptr<Worker>> workers_;
  absl::flat_hash_map<std::string, std::string> by_name_;
  int64_t next_worker_ = 1;
  std::set<std::string> builders_;
  std::set<std::string> tuners_;
  std::map<std::string, std::set<std::string>> host_agents_;
  // Per device key: its agents and how many report each LLVM CPU.
  struct KeyAgents {
    std::set<std::string> ids;
    std::map<std::string, int> llvm_cpus;
  };
  absl::flat_hash_map<std::string, KeyAgents> keys_;
};

// The `role` label of the tracker's metrics for a registered role.
WorkerRole MetricsRole(proto::WorkerRole role);

// "ipv4:127.0.0.1:5555" -> "127.0.0.1"; "ipv6:[::1]:5555" -> "[::1]".
std::string HostOfPeer(const std::string& peer);

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_WORKER_REGISTRY_H_

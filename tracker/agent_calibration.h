// Agent calibration and quarantine: which agents of a device key may
// measure, judged from the figures of the fixed calibration kernel they run
// (device_agent/calibration.h) when they register and, while idle, every
// CalibrationPolicy::interval_s.
//
// An agent is quarantined (kept connected, sent no measurement, shown in
// `devices` with the reason) when its latest calibration
//   - failed (the agent says why);
//   - is noisy: its repeats' relative spread exceeds max_noise (5 %), or
//     exceeds noisier_factor (5) times the median spread of its key's other
//     agents and min_noise_for_relative (3 %), so that an agent at 3-4 %
//     beside quiet ones at 1 % (common on shared VMs) still measures, and
//     one at 0.4 % is never "noisy" next to 0.1 %;
//   - is slow: its throughput is below min_relative_speed times the median of
//     its key's other agents' latest figures (another board of the same key,
//     a throttled host);
//   - drifted: its throughput is more than max_drift away from its own first
//     passing figure (thermal throttling, a governor change, a new
//     neighbour).
// A quarantined agent is recalibrated every recheck_s while it has no work;
// the first calibration that passes lifts the quarantine. A calibration is
// timed like a measurement: with measurement isolation it runs only on a
// quiet host (no build, no measurement, no other calibration there), and an
// agent waiting for one holds back new builds and measurements on its host
// (Dispatcher) until it ran.
//
// Only agents that say they calibrate (Register.calibrates) take part; the
// others are never calibrated nor quarantined. Not thread-safe: the
// Scheduler facade calls everything under its one mutex.
#ifndef TUNEFLEET_TRACKER_AGENT_CALIBRATION_H_
#define TUNEFLEET_TRACKER_AGENT_CALIBRATION_H_

#include <deque>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/fleet.pb.h"
#include "tracker/dispatcher.h"
#include "tracker/lease_keeper.h"
#include "tracker/metrics_interface.h"
#include "tracker/scheduler_options.h"
#include "tracker/worker_registry.h"

namespace tunefleet {

// Why `latest` keeps its agent out of measurements, "" when it passes.
// `baseline_gflops`: the agent's first passing figure (0: none yet);
// `others`: the latest calibrations of the key's other agents.
std::string QuarantineReason(const proto::Calibration& latest, double baseline_gflops,
                             const std::vector<proto::Calibration>& others,
                             const CalibrationPolicy& policy);

class AgentCalibrations {
 public:
  // Every pointer must outlive this object; `metrics` may be null.
  AgentCalibrations(const CalibrationPolicy* policy, WorkerRegistry* workers,
                    Dispatcher* dispatcher, LeaseKeeper* leases, TrackerMetricsInterface* metrics)
      : policy_(policy),
        workers_(workers),
        dispatcher_(dispatcher),
        leases_(leases),
        metrics_(metrics) {}

  // A new agent: one that calibrates is asked to as soon as its host is
  // quiet (at once on a quiet host) and measures only once it passed; the
  // others are free at once.
  void Admit(Worker& agent);
  // The agent's answer to a CalibrateRequest: kept, judged against its key,
  // and the agent quarantined, freed or left quarantined; then the key's
  // other agents are judged again on their latest figures against it. An agent that was
  // not asked is refused (FailedPrecondition), its figure not kept.
  [[nodiscard]] absl::Status Calibrated(Worker& agent, const proto::Calibration& calibration,
                                        double now, double wall);
  // Marks the agents that are due (idle for interval_s since their last
  // calibration, or quarantined for recheck_s) as wanting one, and asks
  // every agent that wants one and whose host is quiet; call on every tick.
  void RequestDue(double now);

 private:
  // `agent` owes a calibration: out of the free list until it answered.
  void Want(Worker& agent, const std::string& why);
  // Asks each agent that wants a calibration and whose host is quiet.
  void RequestWanted();
  // No build, no measurement and no other calibration on `agent`'s host
  // (agents outside measurement isolation: always).
  bool HostQuiet(const Worker& agent) const;
  void Request(Worker& agent);
  // The latest calibrations of the other agents of `agent`'s key.
  std::vector<proto::Calibration> OthersOf(const Worker& agent) const;
  // Quarantines `agent` for `reason`, or (reason "") frees it; `agent` has
  // a calibration.
  void Judge(Worker& agent, const std::string& reason);

  const CalibrationPolicy* policy_;
  WorkerRegistry* workers_;
  Dispatcher* dispatcher_;
  LeaseKeeper* leases_;
  TrackerMetricsInterface* metrics_;
  std::deque<std::string> wanted_;  // ids of agents that want a calibration, oldest first
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_AGENT_CALIBRATION_H_

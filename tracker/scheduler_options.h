// SchedulerOptions: the tracker scheduler's tunables, shared by all its parts
// (job table, dispatcher, lease keeper, trial life cycle). Set by the tracker
// server from flags; tests change single fields.
#ifndef TUNEFLEET_TRACKER_SCHEDULER_OPTIONS_H_
#define TUNEFLEET_TRACKER_SCHEDULER_OPTIONS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "common/signing.h"

namespace tunefleet {

// When an agent that calibrates (Register.calibrates) is kept out of
// measurements, and how often it recalibrates (tracker/agent_calibration.h
// applies it and says what each field means).
struct CalibrationPolicy {
  double max_noise = 0.05;               // relative spread above which an agent is noisy
  double noisier_factor = 5.0;           // ... or this many times its key's median spread
  double min_noise_for_relative = 0.03;  // (only above this spread)
  double min_relative_speed = 0.8;       // slower than this x its key's median: slow
  double max_drift = 0.15;               // this far from its first passing figure: drifted
  double interval_s = 600;               // an idle agent is recalibrated this often
  double recheck_s = 60;                 // a quarantined one this often

  // InvalidArgument naming the field for a value outside its range.
  [[nodiscard]] absl::Status Validate() const;
};

struct SchedulerOptions {
  double heartbeat_interval_s = 1.0;  // asked of every worker
  double worker_timeout_s = 10.0;     // silent this long -> worker lost
  // A measurement lease lasts the job's timeout_s plus this (the agent may
  // have to compute the workload's reference output first).
  double measure_lease_grace_s = 120.0;
  double build_lease_grace_s = 10.0;  // a build lease: build timeout + this
  int default_max_attempts = 3;
  double default_build_timeout_s = 60.0;
  int64_t max_trials_per_job = 1000000;
  int max_window = 512;  // cap of a tuner's suggested window
  // Never build on a host while an agent on that host measures, and never
  // start a measurement on a host while it builds (hosts told apart by the
  // peer address of their streams): the compiler must not disturb the
  // timings of a one-machine fleet. Hosts that only build or only measure
  // (a real cluster) overlap as usual.
  bool isolate_measurements = true;
  // A tick this much later than the one before means the tracker itself
  // stalled (stopped, starved, suspended): nobody could be heard meanwhile,
  // so the gap is forgiven, every worker's silence and every lease
  // deadline shifted by it, before anyone is judged (no attempts charged
  // to workers for the tracker's pause). Ticks run every 0.1 s. 0: off.
  double stall_forgiveness_s = 2.0;
  // Largest artifact accepted from a builder.
  int64_t max_artifact_bytes = 64LL << 20;
  CalibrationPolicy calibration;
  // Builder signing keys (common/signing.h). Non-empty: a builder must sign
  // with one of them (checked at registration and on every artifact), and
  // agents are told to load only artifacts signed by one of them.
  PinnedKeys builder_keys;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_SCHEDULER_OPTIONS_H_

// SchedulerOptions: the tracker scheduler's tunables, shared by all its parts
// (job table, dispatcher, lease keeper, trial life cycle). Set by the tracker
// server from flags; tests change single fields.
#ifndef TUNEFLEET_TRACKER_SCHEDULER_OPTIONS_H_
#define TUNEFLEET_TRACKER_SCHEDULER_OPTIONS_H_

#include <cstdint>

namespace tunefleet {

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
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_SCHEDULER_OPTIONS_H_

#include "tracker/scheduler_flags.h"

#include "absl/flags/flag.h"

ABSL_FLAG(double, heartbeat_s, 1.0, "heartbeat interval asked of workers");
ABSL_FLAG(double, worker_timeout_s, 10.0,
          "a worker silent this long is dropped and its work requeued");
ABSL_FLAG(double, measure_lease_grace_s, 120.0, "measurement lease: the job's timeout plus this");
ABSL_FLAG(
    bool, isolate_measurements, true,
    "never build on a host while an agent there measures (one-machine fleets keep clean timings)");
ABSL_FLAG(double, calibration_interval_s, 600,
          "an idle agent that calibrates runs its calibration kernel again this often");
ABSL_FLAG(double, quarantine_recheck_s, 60, "a quarantined agent is recalibrated this often");
ABSL_FLAG(double, quarantine_max_noise, 0.05,
          "an agent whose calibration spread exceeds this is quarantined as noisy");
ABSL_FLAG(double, quarantine_min_relative_speed, 0.8,
          "an agent slower than this fraction of its key's median calibration is quarantined");
ABSL_FLAG(double, quarantine_max_drift, 0.15,
          "an agent this far from its own first calibration is quarantined as drifted");

namespace tunefleet {

SchedulerOptions SchedulerOptionsFromFlags() {
  SchedulerOptions options;
  options.heartbeat_interval_s = absl::GetFlag(FLAGS_heartbeat_s);
  options.worker_timeout_s = absl::GetFlag(FLAGS_worker_timeout_s);
  options.measure_lease_grace_s = absl::GetFlag(FLAGS_measure_lease_grace_s);
  options.isolate_measurements = absl::GetFlag(FLAGS_isolate_measurements);
  options.calibration.interval_s = absl::GetFlag(FLAGS_calibration_interval_s);
  options.calibration.recheck_s = absl::GetFlag(FLAGS_quarantine_recheck_s);
  options.calibration.max_noise = absl::GetFlag(FLAGS_quarantine_max_noise);
  options.calibration.min_relative_speed = absl::GetFlag(FLAGS_quarantine_min_relative_speed);
  options.calibration.max_drift = absl::GetFlag(FLAGS_quarantine_max_drift);
  return options;
}

}  // namespace tunefleet

// The fleet commands of the `tunefleet` CLI as library functions (so tests
// and benchmarks run exactly what users run):
//
//   tunefleet up --agents 2                      # a one-machine fleet on 127.0.0.1
//   tunefleet submit --shape 512,512,512 --trials 200 --key local
//   tunefleet submit --model resnet18.onnx --trials_per_task 64 --selective=top3
//   tunefleet watch --job job-1                  # AutoTVM's progress line, live
//   tunefleet devices | queue | jobs
//   tunefleet best --job job-1 | export --job job-1 --log out.jsonl | cancel --job job-1
#ifndef TUNEFLEET_CLI_FLEET_COMMANDS_H_
#define TUNEFLEET_CLI_FLEET_COMMANDS_H_

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "clients/cpp/fleet_client.h"
#include "launcher/fleet_launcher.h"
#include "proto/fleet.pb.h"

namespace tunefleet {

// Submits `spec` (JobSpecFromFlags, or one made by hand) and prints its job id.
[[nodiscard]] absl::StatusOr<proto::JobStatus> RunSubmit(FleetClient& client,
                                                         const proto::JobSpec& spec,
                                                         std::ostream& out);
// Prints one AutoTVM progress line per finished trial ("\r"-updated on a
// terminal when `live`; for a model job the trial's task and the model's
// estimated latency), then the final state (a model job: each task's best).
// Error if the job failed. A tracker that goes away (restarts) is waited for
// up to 2 minutes and the watch goes on from the job's state then.
[[nodiscard]] absl::Status RunWatch(FleetClient& client, const std::string& job_id, bool live,
                                    std::ostream& out);
[[nodiscard]] absl::Status RunDevices(FleetClient& client, std::ostream& out);
[[nodiscard]] absl::Status RunQueue(FleetClient& client, std::ostream& out);
[[nodiscard]] absl::Status RunJobs(FleetClient& client, bool all, std::ostream& out);
// The job's best record (of task `task_index` when >= 0); a model job
// without a task index prints each task's best and the estimated latency.
[[nodiscard]] absl::Status RunFleetBest(FleetClient& client, const std::string& job_id,
                                        int32_t task_index, std::ostream& out);
// Writes the job's records (of one task when task_index >= 0; all jobs'
// when job_id is empty) to `out` when path is empty; otherwise adds to the
// file at `path` (created if missing) the records it does not hold yet, so
// exporting again never duplicates a line (the file is replaced atomically).
[[nodiscard]] absl::Status RunExport(FleetClient& client, const std::string& job_id,
                                     int32_t task_index, const std::string& path,
                                     std::ostream& out);
[[nodiscard]] absl::Status RunCancel(FleetClient& client, const std::string& job_id,
                                     std::ostream& out);

// What `up` starts unless told otherwise: a fleet in .tunefleet/ on key
// "local" whose builders and agents use every core, named after this
// process, with the tracker's own heartbeat and failure detection; only its
// quarantine recheck is shorter (every process of this fleet starts at once
// on this host, so an agent calibrated in that bustle and quarantined is
// rechecked within seconds, not the minute a cluster waits).
FleetLauncher::Options UpFleetOptions();

// Starts the fleet (launcher/fleet_launcher.h) on 127.0.0.1, prints where
// everything is (and each child's pid), and supervises it until
// SIGINT/SIGTERM, then stops it all. A child that dies is reported (its name,
// exit code or signal, log) and restarted with backoff (options.restart);
// one that dies too often stops the fleet and `up` returns Aborted naming it.
[[nodiscard]] absl::Status RunUp(const FleetLauncher::Options& options, std::ostream& out);

}  // namespace tunefleet

#endif  // TUNEFLEET_CLI_FLEET_COMMANDS_H_

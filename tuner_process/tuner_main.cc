// tunefleet_tuner: claims jobs from the tracker and runs their search.
//
//   tunefleet_tuner --tracker=127.0.0.1:7070 --token_file=tuner.token --max_jobs=4
//
// The shared worker flags (--tracker, --token_file, --tls_*, --name,
// --drain_timeout_s, --metrics_listen) are in worker_stream/worker_flags.h.
#include <iostream>
#include <memory>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "common/daemon_util.h"
#include "common/logging.h"
#include "tuner_process/tuner_service.h"
#include "worker_stream/worker_flags.h"
#include "worker_stream/worker_metrics.h"

ABSL_FLAG(int, max_jobs, 4, "jobs run at once");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  tunefleet::BlockTerminationSignals();
  tunefleet::TunerServiceOptions options;
  absl::StatusOr<tunefleet::WorkerDaemonOptions> worker =
      tunefleet::WorkerDaemonOptionsFromFlags("tuner");
  if (!worker.ok()) {
    std::cerr << "tunefleet_tuner: " << worker.status().message() << "\n";
    return 1;
  }
  options.worker = *std::move(worker);
  options.max_jobs = absl::GetFlag(FLAGS_max_jobs);
  if (absl::Status valid = options.Validate(); !valid.ok()) {
    std::cerr << "tunefleet_tuner: " << valid.message() << "\n";
    return 1;
  }

  absl::StatusOr<std::unique_ptr<tunefleet::MetricsServer>> metrics =
      tunefleet::StartWorkerMetrics(options.worker);
  if (!metrics.ok()) {
    std::cerr << "tunefleet_tuner: " << metrics.status().message() << "\n";
    return 1;
  }
  tunefleet::TunerService service(options);
  service.Start();
  const int signal = tunefleet::WaitForTerminationSignal();
  TF_LOG(INFO) << "signal " << signal << ": handing jobs back and stopping tuner "
               << options.worker.name;
  service.Stop();
  return 0;
}

// tunefleet_builder: dials the tracker and builds what it is sent.
//
//   tunefleet_builder --tracker=127.0.0.1:7070 --token_file=builder.token
//
// The shared worker flags (--tracker, --token_file, --tls_*, --name,
// --drain_timeout_s) are in worker/worker_flags.h.
#include <cstdint>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "builder_worker/builder_daemon.h"
#include "common/daemon_util.h"
#include "common/logging.h"
#include "worker/worker_flags.h"

ABSL_FLAG(int, parallelism, 0, "builds at once (0 = all cores)");
ABSL_FLAG(int64_t, cache_mb, 256, "artifact cache size in MiB");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  tunefleet::BlockTerminationSignals();
  tunefleet::BuilderDaemonOptions options;
  absl::StatusOr<tunefleet::WorkerDaemonOptions> worker =
      tunefleet::WorkerDaemonOptionsFromFlags("builder");
  if (!worker.ok()) {
    std::cerr << "tunefleet_builder: " << worker.status().message() << "\n";
    return 2;
  }
  options.worker = *std::move(worker);
  options.service.parallelism = absl::GetFlag(FLAGS_parallelism);
  options.service.cache_capacity_bytes = absl::GetFlag(FLAGS_cache_mb) << 20;
  if (absl::Status valid = options.Validate(); !valid.ok()) {
    std::cerr << "tunefleet_builder: " << valid.message() << "\n";
    return 2;
  }

  tunefleet::BuilderDaemon daemon(options);
  daemon.Start();
  const int signal = tunefleet::WaitForTerminationSignal();
  TF_LOG(INFO) << "signal " << signal << ": draining and stopping builder " << options.worker.name;
  daemon.Stop();
  return 0;
}

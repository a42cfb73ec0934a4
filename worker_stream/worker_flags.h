// The command-line flags every worker process shares, read into
// WorkerDaemonOptions: --tracker, --token_file, --tls_ca, --tls_cert,
// --tls_key, --name, --drain_timeout_s and --metrics_listen (served by
// StartWorkerMetrics, worker_stream/worker_metrics.h). Link it into worker mains only
// (it defines the flags); each main adds its role's own flags.
//
//   absl::ParseCommandLine(argc, argv);
//   absl::StatusOr<WorkerDaemonOptions> worker = WorkerDaemonOptionsFromFlags("builder");
#ifndef TUNEFLEET_WORKER_STREAM_WORKER_FLAGS_H_
#define TUNEFLEET_WORKER_STREAM_WORKER_FLAGS_H_

#include <string>

#include "absl/status/statusor.h"
#include "worker_stream/worker_daemon.h"
#include "worker_stream/worker_metrics.h"  // StartWorkerMetrics, for the mains

namespace tunefleet {

// The shared flags after absl::ParseCommandLine: the token file read, the
// TLS credentials made, and the name defaulted to "<name_prefix>-<host>-<pid>".
// Errors name the flag or file at fault.
[[nodiscard]] absl::StatusOr<WorkerDaemonOptions> WorkerDaemonOptionsFromFlags(
    const std::string& name_prefix);

}  // namespace tunefleet

#endif  // TUNEFLEET_WORKER_STREAM_WORKER_FLAGS_H_

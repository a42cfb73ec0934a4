// StartWorkerMetrics: the /metrics endpoint of a worker process (builder,
// device agent, tuner): the process metrics and tunefleet_build_info every
// TuneFleet daemon serves (metrics/metrics_server.h), on
// WorkerDaemonOptions::metrics_listen (--metrics_listen). Workers report
// their work through the tracker, whose /metrics has the fleet's figures;
// this endpoint is for the health of the process itself.
//
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<MetricsServer> metrics, StartWorkerMetrics(options));
//   ... run the daemon; destroying `metrics` stops the endpoint ...
#ifndef TUNEFLEET_WORKER_STREAM_WORKER_METRICS_H_
#define TUNEFLEET_WORKER_STREAM_WORKER_METRICS_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "metrics/metrics_server.h"
#include "worker_stream/worker_daemon.h"

namespace tunefleet {

// Starts the endpoint on options.metrics_listen and logs its URL
// ("... metrics on http://127.0.0.1:9465/metrics", the port actually bound).
// Null when metrics_listen is empty. Errors name --metrics_listen and the
// address (InvalidArgument: not host:port; Unavailable: cannot bind).
// `collectables`: the worker's own figures, served beside the process ones.
[[nodiscard]] absl::StatusOr<std::unique_ptr<MetricsServer>> StartWorkerMetrics(
    const WorkerDaemonOptions& options,
    std::vector<std::shared_ptr<prometheus::Collectable>> collectables = {});

}  // namespace tunefleet

#endif  // TUNEFLEET_WORKER_STREAM_WORKER_METRICS_H_

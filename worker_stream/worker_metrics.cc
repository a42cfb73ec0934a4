#include "worker_stream/worker_metrics.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<std::unique_ptr<MetricsServer>> StartWorkerMetrics(
    const WorkerDaemonOptions& options,
    std::vector<std::shared_ptr<prometheus::Collectable>> collectables) {
  if (options.metrics_listen.empty()) return nullptr;
  absl::StatusOr<std::unique_ptr<MetricsServer>> server =
      StartMetricsServer(options.metrics_listen, std::move(collectables));
  if (!server.ok()) {
    return absl::Status(server.status().code(),
                        absl::StrCat("--metrics_listen: ", server.status().message()));
  }
  TF_LOG(INFO) << "worker " << options.name << ": metrics on " << (*server)->url();
  return server;
}

}  // namespace tunefleet

#include "builder_worker/builder_flags.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "common/daemon_util.h"
#include "common/logging.h"
#include "common/signing.h"
#include "worker_stream/worker_flags.h"
#include "worker_stream/worker_metrics.h"

ABSL_FLAG(int, parallelism, 0, "builds at once (0 = all cores)");
ABSL_FLAG(int64_t, cache_mb, 256, "artifact cache size in MiB");
ABSL_FLAG(std::string, signing_key, "",
          "Ed25519 key file every artifact is signed with (tunefleet keys new); a tracker with "
          "--builder_keys refuses builders that do not sign with a key it pins");

namespace tunefleet {

int RunBuilderFromFlags(const std::string& program,
                        const std::function<void(BuilderDaemonOptions&)>& customize) {
  BuilderDaemonOptions options;
  absl::StatusOr<WorkerDaemonOptions> worker = WorkerDaemonOptionsFromFlags("builder");
  if (!worker.ok()) {
    std::cerr << program << ": " << worker.status().message() << "\n";
    return 2;
  }
  options.worker = *std::move(worker);
  options.service.parallelism = absl::GetFlag(FLAGS_parallelism);
  options.service.cache_capacity_bytes = absl::GetFlag(FLAGS_cache_mb) << 20;
  if (const std::string key_file = absl::GetFlag(FLAGS_signing_key); !key_file.empty()) {
    absl::StatusOr<SigningKey> key = LoadSigningKey(key_file);
    if (!key.ok()) {
      std::cerr << program << ": " << key.status().message() << "\n";
      return 2;
    }
    options.service.signing_key = *std::move(key);
  }
  if (customize) customize(options);
  if (absl::Status valid = options.Validate(); !valid.ok()) {
    std::cerr << program << ": " << valid.message() << "\n";
    return 2;
  }

  absl::StatusOr<std::unique_ptr<MetricsServer>> metrics = StartWorkerMetrics(options.worker);
  if (!metrics.ok()) {
    std::cerr << program << ": " << metrics.status().message() << "\n";
    return 2;
  }
  BuilderDaemon daemon(options);
  daemon.Start();
  const int signal = WaitForTerminationSignal();
  TF_LOG(INFO) << "signal " << signal << ": draining and stopping builder " << options.worker.name;
  daemon.Stop();
  return 0;
}

}  // namespace tunefleet

#include "worker_stream/worker_flags.h"

#include "absl/flags/flag.h"
#include "common/daemon_util.h"
#include "common/status_macros.h"
#include "rpc/plaintext_policy.h"

ABSL_FLAG(std::string, tracker, "127.0.0.1:7070", "tracker address (host:port)");
ABSL_FLAG(std::string, token_file, "", "file holding this worker's role token (empty: no token)");
ABSL_FLAG(std::string, tls_ca, "",
          "CA of the tracker's TLS certificate (PEM); empty: plaintext (loopback, or --insecure)");
ABSL_FLAG(std::string, tls_cert, "",
          "this worker's client certificate (PEM), when the tracker requires one");
ABSL_FLAG(std::string, tls_key, "", "this worker's client key (PEM)");
ABSL_FLAG(bool, insecure, false,
          "allow a plaintext connection to a tracker that is not on loopback (its token and "
          "artifacts could be read and forged on the way)");
ABSL_FLAG(std::string, name, "", "unique worker name (default <role>-<hostname>-<pid>)");
ABSL_FLAG(double, drain_timeout_s, 30,
          "on SIGTERM/SIGINT: how long work in hand may take to finish before it is handed back");
ABSL_FLAG(std::string, metrics_listen, "",
          "host:port to serve Prometheus metrics at /metrics (process CPU, memory, fds, start "
          "time, build info); port 0: any free port, printed at start; empty: off");

namespace tunefleet {

[[nodiscard]] absl::StatusOr<WorkerDaemonOptions> WorkerDaemonOptionsFromFlags(
    const std::string& name_prefix) {
  WorkerDaemonOptions options;
  options.tracker_address = absl::GetFlag(FLAGS_tracker);
  TF_ASSIGN_OR_RETURN(options.token, ReadTokenFile(absl::GetFlag(FLAGS_token_file)));
  // The PEM is read once: for the channel, and for naming TLS failures.
  TF_ASSIGN_OR_RETURN(std::unique_ptr<TlsClientPem> pem,
                      LoadTlsClientPem(absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert),
                                       absl::GetFlag(FLAGS_tls_key)));
  options.credentials = TlsCredentialsFromPem(pem.get());
  if (options.credentials == nullptr) {
    TF_RETURN_IF_ERROR(
        CheckPlaintextAllowed(options.tracker_address, absl::GetFlag(FLAGS_insecure), "--tls_ca"));
  }
  options.tls_pem = std::move(pem);
  options.name = absl::GetFlag(FLAGS_name);
  if (options.name.empty()) options.name = DefaultWorkerName(name_prefix);
  options.drain_timeout_s = absl::GetFlag(FLAGS_drain_timeout_s);
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  return options;
}

}  // namespace tunefleet

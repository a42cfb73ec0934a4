// tunefleet_builder: dials the tracker and builds what it is sent.
//
//   tunefleet_builder --tracker=127.0.0.1:7070 --token_file=builder.token
#include <cstdio>
#include <string>

#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "builder_worker/builder_daemon.h"
#include "common/daemon_util.h"
#include "common/logging.h"
#include "common/worker_connection.h"

ABSL_FLAG(std::string, tracker, "127.0.0.1:7070", "tracker address (host:port)");
ABSL_FLAG(std::string, token_file, "", "file holding the builder token (empty: no token)");
ABSL_FLAG(std::string, tls_ca, "", "CA of the tracker's TLS certificate (PEM); empty: plaintext (loopback only)");
ABSL_FLAG(std::string, tls_cert, "", "this worker's client certificate (PEM), when the tracker requires one");
ABSL_FLAG(std::string, tls_key, "", "this worker's client key (PEM)");
ABSL_FLAG(std::string, name, "", "worker name (default builder-<hostname>-<pid>)");
ABSL_FLAG(int, parallelism, 0, "builds at once (0 = all cores)");
ABSL_FLAG(int64_t, cache_mb, 256, "artifact cache size in MiB");
ABSL_FLAG(double, simulate_build_delay_ms, 0, "test only: sleep this long before every build");
ABSL_FLAG(double, simulate_build_ms, 0, "bench only: compile nothing, answer placeholders for simulated agents");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  tunefleet::BlockTerminationSignals();
  absl::StatusOr<std::string> token = tunefleet::ReadTokenFile(absl::GetFlag(FLAGS_token_file));
  if (!token.ok()) {
    std::fprintf(stderr, "tunefleet_builder: %s\n", std::string(token.status().message()).c_str());
    return 2;
  }
  tunefleet::BuilderDaemonOptions options;
  options.tracker_address = absl::GetFlag(FLAGS_tracker);
  options.token = *token;
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> tls = tunefleet::MakeTlsCredentials(
      absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key));
  if (!tls.ok()) {
    std::cerr << "tunefleet_builder: " << tls.status() << "\n";
    return 1;
  }
  options.credentials = *tls;
  options.name = absl::GetFlag(FLAGS_name);
  if (options.name.empty()) options.name = tunefleet::DefaultWorkerName("builder");
  options.parallelism = absl::GetFlag(FLAGS_parallelism);
  options.cache_capacity_bytes = absl::GetFlag(FLAGS_cache_mb) << 20;
  options.simulate_build_delay_s = absl::GetFlag(FLAGS_simulate_build_delay_ms) / 1000.0;
  options.simulate_build_s = absl::GetFlag(FLAGS_simulate_build_ms) / 1000.0;
  if (absl::Status valid = options.Validate(); !valid.ok()) {
    std::fprintf(stderr, "tunefleet_builder: %s\n", std::string(valid.message()).c_str());
    return 2;
  }

  tunefleet::BuilderDaemon daemon(options);
  daemon.Start();
  const int signal = tunefleet::WaitForTerminationSignal();
  TF_LOG(INFO) << "signal " << signal << ": stopping builder " << options.name;
  daemon.Stop();
  return 0;
}

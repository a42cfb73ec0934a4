// tunefleet_tuner: claims jobs from the tracker and runs their search.
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "common/daemon_util.h"
#include "common/logging.h"
#include "common/worker_connection.h"
#include "tuner_process/tuner_service.h"

ABSL_FLAG(std::string, tracker, "127.0.0.1:7070", "tracker address");
ABSL_FLAG(std::string, token_file, "", "file holding this tuner's token");
ABSL_FLAG(std::string, tls_ca, "", "CA of the tracker's TLS certificate (PEM); empty: plaintext (loopback only)");
ABSL_FLAG(std::string, tls_cert, "", "this worker's client certificate (PEM), when the tracker requires one");
ABSL_FLAG(std::string, tls_key, "", "this worker's client key (PEM)");
ABSL_FLAG(std::string, name, "", "unique name (default tuner-<host>-<pid>)");
ABSL_FLAG(int, max_jobs, 4, "jobs run at once");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  tunefleet::BlockTerminationSignals();

  tunefleet::TunerServiceOptions options;
  options.tracker_address = absl::GetFlag(FLAGS_tracker);
  options.max_jobs = absl::GetFlag(FLAGS_max_jobs);
  options.name = absl::GetFlag(FLAGS_name);
  if (options.name.empty()) options.name = tunefleet::DefaultWorkerName("tuner");
  absl::StatusOr<std::string> token = tunefleet::ReadTokenFile(absl::GetFlag(FLAGS_token_file));
  if (!token.ok()) {
    std::cerr << "tunefleet_tuner: " << token.status() << "\n";
    return 1;
  }
  options.token = *token;
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> tls = tunefleet::MakeTlsCredentials(
      absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key));
  if (!tls.ok()) {
    std::cerr << "tunefleet_tuner: " << tls.status() << "\n";
    return 1;
  }
  options.credentials = *tls;
  tunefleet::TunerService service(options);
  service.Start();
  const int sig = tunefleet::WaitForTerminationSignal();
  TF_LOG(INFO) << "signal " << sig << ": stopping";
  service.Stop();
  return 0;
}

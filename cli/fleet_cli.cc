// The fleet's job commands: submit, watch, jobs, devices, queue, export and
// cancel, each over one connection to the tracker (--tracker, --token_file,
// TLS, or the fleet of --fleet_dir); best and measure use it too.
#include <unistd.h>

#include <iostream>
#include <memory>

#include "absl/flags/flag.h"
#include "cli/cli_commands.h"
#include "cli/fleet_commands.h"
#include "cli/shared_flags.h"
#include "common/status_macros.h"
#include "rpc/plaintext_policy.h"
#include "rpc/tls_diagnosis.h"
#include "worker_stream/worker_connection.h"

ABSL_FLAG(std::string, tracker, "", "tracker host:port (default: the fleet of --fleet_dir)");
ABSL_FLAG(std::string, token_file, "", "file holding your token (default: <fleet_dir>/user.token)");
ABSL_FLAG(std::string, tls_ca, "",
          "CA of the tracker's TLS certificate (PEM); empty: plaintext (loopback, or --insecure)");
ABSL_FLAG(std::string, tls_cert, "", "client certificate (PEM), when the tracker requires one");
ABSL_FLAG(std::string, tls_key, "", "client key (PEM)");
ABSL_FLAG(bool, insecure, false,
          "allow plaintext to a tracker that is not on loopback (your token could be read on "
          "the way)");
ABSL_FLAG(std::string, job, "", "job id (watch, best, export, cancel)");
ABSL_FLAG(std::string, name, "", "job name (free text)");
ABSL_FLAG(int32_t, priority, 1, "job weight when jobs share a device key");
ABSL_FLAG(int32_t, window, 0, "trials the tuner keeps in flight (0: the tracker's suggestion)");
ABSL_FLAG(bool, watch, false, "submit: then watch the job until it ends");
ABSL_FLAG(bool, all, false, "jobs: include finished jobs");
ABSL_FLAG(double, queue_timeout, 0,
          "submit: fail the job when no agent of its key has been connected for this many "
          "seconds (0: wait as long as it takes)");

namespace tunefleet {
namespace {

[[nodiscard]] absl::Status NeedJob(const std::string& job) {
  return job.empty() ? absl::InvalidArgumentError("--job is required") : absl::OkStatus();
}

}  // namespace

std::string FleetJobFlag() { return absl::GetFlag(FLAGS_job); }

[[nodiscard]] absl::Status WithFleetClient(const std::function<absl::Status(FleetClient&)>& fn) {
  TF_ASSIGN_OR_RETURN(FleetAddress fleet,
                      ResolveFleet(absl::GetFlag(FLAGS_tracker), absl::GetFlag(FLAGS_token_file),
                                   absl::GetFlag(FLAGS_fleet_dir)));
  // The PEM is read once: for the channel, and for naming TLS failures.
  TF_ASSIGN_OR_RETURN(const std::unique_ptr<TlsClientPem> pem,
                      LoadTlsClientPem(absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert),
                                       absl::GetFlag(FLAGS_tls_key)));
  fleet.credentials = TlsCredentialsFromPem(pem.get());
  if (fleet.credentials == nullptr) {
    TF_RETURN_IF_ERROR(
        CheckPlaintextAllowed(fleet.address, absl::GetFlag(FLAGS_insecure), "--tls_ca"));
  }
  FleetClient client(fleet);
  const absl::Status status = fn(client);
  // gRPC says only "unavailable" for a TLS misconfiguration: name it.
  return absl::IsUnavailable(status) ? ExplainUnavailable(status, fleet.address, pem.get())
                                     : status;
}

[[nodiscard]] absl::Status SubmitCli(const CliArgs&) {
  TF_ASSIGN_OR_RETURN(proto::JobSpec spec, JobSpecFromFlags({.target = "llvm -mcpu=native",
                                                             .task_policy = "gradient",
                                                             .for_fleet = true}));
  if (const std::string name = absl::GetFlag(FLAGS_name); !name.empty()) spec.set_name(name);
  spec.set_device_key(absl::GetFlag(FLAGS_key));
  spec.set_priority(absl::GetFlag(FLAGS_priority));
  spec.set_window(absl::GetFlag(FLAGS_window));
  if (const double timeout = absl::GetFlag(FLAGS_queue_timeout); timeout > 0) {
    spec.set_queue_timeout_s(timeout);
  }
  return WithFleetClient([&](FleetClient& client) -> absl::Status {
    TF_ASSIGN_OR_RETURN(const proto::JobStatus submitted, RunSubmit(client, spec, std::cout));
    if (!absl::GetFlag(FLAGS_watch)) return absl::OkStatus();
    return RunWatch(client, submitted.job_id(), isatty(2), std::cerr);
  });
}

[[nodiscard]] absl::Status WatchCli(const CliArgs&) {
  const std::string job = absl::GetFlag(FLAGS_job);
  TF_RETURN_IF_ERROR(NeedJob(job));
  return WithFleetClient(
      [&](FleetClient& client) { return RunWatch(client, job, isatty(1), std::cout); });
}

[[nodiscard]] absl::Status JobsCli(const CliArgs&) {
  return WithFleetClient(
      [](FleetClient& client) { return RunJobs(client, absl::GetFlag(FLAGS_all), std::cout); });
}

[[nodiscard]] absl::Status DevicesCli(const CliArgs&) {
  return WithFleetClient([](FleetClient& client) { return RunDevices(client, std::cout); });
}

[[nodiscard]] absl::Status QueueCli(const CliArgs&) {
  return WithFleetClient([](FleetClient& client) { return RunQueue(client, std::cout); });
}

[[nodiscard]] absl::Status ExportCli(const CliArgs&) {
  TF_ASSIGN_OR_RETURN(const int task, TaskIndexFromFlag());
  return WithFleetClient([&](FleetClient& client) {
    return RunExport(client, absl::GetFlag(FLAGS_job), task, absl::GetFlag(FLAGS_log), std::cout);
  });
}

[[nodiscard]] absl::Status CancelCli(const CliArgs&) {
  const std::string job = absl::GetFlag(FLAGS_job);
  TF_RETURN_IF_ERROR(NeedJob(job));
  return WithFleetClient([&](FleetClient& client) { return RunCancel(client, job, std::cout); });
}

}  // namespace tunefleet

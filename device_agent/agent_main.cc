// tunefleet_agent: dials the tracker and measures what it is sent on this
// device.
//
//   tunefleet_agent --tracker=127.0.0.1:7070 --token_file=agent.token --key=x86-avx2
//   tunefleet_agent --key=sim --simulate_measure_ms=5 --agents=64   # bench only
//   qemu-aarch64 -L / ./tunefleet_agent --key=rk3399 --runner_launcher="qemu-aarch64 -L /"
//   tunefleet_agent --key=h100 --gpu --gpu_device=0   # must have a GPU
//
// GPU: every agent looks for CUDA device --gpu_device through libcuda.so.1
// and reports it in its DeviceInfo when present (logging why when not);
// --gpu makes a missing GPU a start-up error. Artifacts pick their own path
// either way: a GPU artifact runs on the GPU, a shared object on the CPU.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/daemon_util.h"
#include "common/logging.h"
#include "device_agent/agent_daemon.h"
#include "device_agent/device_info.h"
#include "common/worker_connection.h"

ABSL_FLAG(std::string, tracker, "127.0.0.1:7070", "tracker address (host:port)");
ABSL_FLAG(std::string, token_file, "", "file holding the agent token (empty: no token)");
ABSL_FLAG(std::string, tls_ca, "", "CA of the tracker's TLS certificate (PEM); empty: plaintext (loopback only)");
ABSL_FLAG(std::string, tls_cert, "", "this worker's client certificate (PEM), when the tracker requires one");
ABSL_FLAG(std::string, tls_key, "", "this worker's client key (PEM)");
ABSL_FLAG(std::string, key, "", "device key (required), e.g. x86-avx2 or rk3399");
ABSL_FLAG(std::string, name, "", "worker name (default agent-<hostname>-<pid>)");
ABSL_FLAG(int, threads, 0, "kernel threads (0 = all cores)");
ABSL_FLAG(double, simulate_measure_ms, 0, "test only: > 0 sleeps this long instead of measuring");
ABSL_FLAG(int, agents, 1, "test/bench only: simulated agents in this process (<name>-<i>)");
ABSL_FLAG(int64_t, cache_mb, 512, "artifact cache size in MiB");
ABSL_FLAG(bool, gpu, false,
          "require an NVIDIA GPU (CUDA driver libcuda.so.1 and device --gpu_device): fail to start "
          "without one; without --gpu a GPU is still detected and used when present");
ABSL_FLAG(int, gpu_device, 0, "CUDA device ordinal that GPU kernels run on");
ABSL_FLAG(std::string, runner_launcher, "",
          "emulated boards only: command prefix the runner child is started with, e.g. "
          "\"qemu-aarch64 -L /\" for an AArch64 agent under qemu-user (empty: exec it directly)");

int Fail(const std::string& message) {
  std::fprintf(stderr, "tunefleet_agent: %s\n", message.c_str());
  return 2;
}

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  tunefleet::BlockTerminationSignals();
  absl::StatusOr<std::string> token = tunefleet::ReadTokenFile(absl::GetFlag(FLAGS_token_file));
  if (!token.ok()) return Fail(std::string(token.status().message()));
  const int agents = absl::GetFlag(FLAGS_agents);
  const double simulate_ms = absl::GetFlag(FLAGS_simulate_measure_ms);
  if (agents < 1) return Fail("--agents must be >= 1");
  if (agents > 1 && simulate_ms <= 0) return Fail("--agents > 1 needs --simulate_measure_ms > 0");

  tunefleet::AgentDaemonOptions options;
  options.tracker_address = absl::GetFlag(FLAGS_tracker);
  options.token = *token;
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> tls = tunefleet::MakeTlsCredentials(
      absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key));
  if (!tls.ok()) {
    std::cerr << "tunefleet_agent: " << tls.status() << "\n";
    return 1;
  }
  options.credentials = *tls;
  options.device_key = absl::GetFlag(FLAGS_key);
  options.kernel_threads = absl::GetFlag(FLAGS_threads);
  options.simulated_measure_s = simulate_ms / 1000.0;
  options.cache_capacity_bytes = absl::GetFlag(FLAGS_cache_mb) << 20;
  options.runner_launcher =
      absl::StrSplit(absl::GetFlag(FLAGS_runner_launcher), ' ', absl::SkipWhitespace());
  std::string name = absl::GetFlag(FLAGS_name);
  if (name.empty()) name = tunefleet::DefaultWorkerName("agent");

  options.gpu_device = absl::GetFlag(FLAGS_gpu_device);
  absl::StatusOr<tunefleet::proto::DeviceInfo> device =
      simulate_ms > 0 ? tunefleet::DetectHostDevice()
                      : tunefleet::DetectAgentDevice({.gpu_ordinal = options.gpu_device,
                                                      .require_gpu = absl::GetFlag(FLAGS_gpu)});
  if (!device.ok()) return Fail(std::string(device.status().message()));
  std::vector<std::unique_ptr<tunefleet::AgentDaemon>> daemons;
  for (int i = 0; i < agents; ++i) {
    options.name = agents == 1 ? name : absl::StrCat(name, "-", i);
    auto daemon = tunefleet::AgentDaemon::Create(options, *device);
    if (!daemon.ok()) return Fail(std::string(daemon.status().message()));
    daemons.push_back(std::move(daemon).value());
  }
  for (auto& daemon : daemons) daemon->Start();
  const int signal = tunefleet::WaitForTerminationSignal();
  TF_LOG(INFO) << "signal " << signal << ": stopping " << agents << " agent(s)";
  for (auto& daemon : daemons) daemon->Stop();
  return 0;
}

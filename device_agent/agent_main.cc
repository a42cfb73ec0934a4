// tunefleet_agent: dials the tracker and measures what it is sent on this
// device.
//
//   tunefleet_agent --tracker=127.0.0.1:7070 --token_file=agent.token --key=x86-avx2
//   qemu-aarch64 -L / ./tunefleet_agent --key=rk3399 --runner_launcher="qemu-aarch64 -L /"
//   tunefleet_agent --key=h100 --gpu --gpu_device=0   # must have a GPU
//
// GPU: every agent looks for CUDA device --gpu_device through libcuda.so.1
// and reports it in its DeviceInfo when present (logging why when not);
// --gpu makes a missing GPU a start-up error. Artifacts pick their own path
// either way: a GPU artifact runs on the GPU, a shared object on the CPU.
// The shared worker flags (--tracker, --token_file, --tls_*, --name,
// --drain_timeout_s, --metrics_listen) are in worker_stream/worker_flags.h.
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_split.h"
#include "common/daemon_util.h"
#include "common/logging.h"
#include "device_agent/agent_daemon.h"
#include "kernel_runtime/device_info.h"
#include "metrics/process_collector.h"
#include "worker_stream/worker_flags.h"
#include "worker_stream/worker_metrics.h"

ABSL_FLAG(std::string, key, "", "device key (required), e.g. x86-avx2 or rk3399");
ABSL_FLAG(int, threads, 0, "kernel threads (0 = all cores)");
ABSL_FLAG(int64_t, cache_mb, 512, "artifact cache size in MiB");
ABSL_FLAG(bool, gpu, false,
          "require an NVIDIA GPU (CUDA driver libcuda.so.1 and device --gpu_device): fail to start "
          "without one; without --gpu a GPU is still detected and used when present");
ABSL_FLAG(int, gpu_device, 0, "CUDA device ordinal that GPU kernels run on");
ABSL_FLAG(std::string, runner_launcher, "",
          "emulated boards only: command prefix the runner child is started with, e.g. "
          "\"qemu-aarch64 -L /\" for an AArch64 agent under qemu-user (empty: exec it directly)");

ABSL_FLAG(std::string, builder_keys, "",
          "pinned builder keys file (tunefleet keys new), as the tracker's: load only artifacts "
          "these keys signed, whatever keys the tracker hands this agent");
ABSL_FLAG(bool, require_signed_artifacts, false,
          "refuse every artifact not signed by a builder key the tracker pins (and every "
          "artifact when it pins none)");
ABSL_FLAG(bool, sandbox, true,
          "run kernels in a sandboxed runner child (no sockets, processes or file writes; "
          "memory, file size and CPU time limits); false only to diagnose a kernel the sandbox "
          "stops");
ABSL_FLAG(bool, sandbox_files, true,
          "with --sandbox: the runner child reads only the system's libraries (Landlock); false "
          "only on a kernel without Landlock, where a kernel could read this user's files");
ABSL_FLAG(int64_t, runner_memory_limit_mb, 0,
          "the sandboxed runner child's memory limit in MiB (0 = 4096 + 128 per kernel thread)");

int Fail(absl::string_view message) {
  std::cerr << "tunefleet_agent: " << message << "\n";
  return 2;
}

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  tunefleet::BlockTerminationSignals();
  tunefleet::AgentDaemonOptions options;
  absl::StatusOr<tunefleet::WorkerDaemonOptions> worker =
      tunefleet::WorkerDaemonOptionsFromFlags("agent");
  if (!worker.ok()) return Fail(worker.status().message());
  options.worker = *std::move(worker);
  options.device_key = absl::GetFlag(FLAGS_key);
  options.kernel_threads = absl::GetFlag(FLAGS_threads);
  options.gpu_device = absl::GetFlag(FLAGS_gpu_device);
  options.cache_capacity_bytes = absl::GetFlag(FLAGS_cache_mb) << 20;
  options.require_signed_artifacts = absl::GetFlag(FLAGS_require_signed_artifacts);
  if (const std::string keys = absl::GetFlag(FLAGS_builder_keys); !keys.empty()) {
    absl::StatusOr<tunefleet::PinnedKeys> pinned = tunefleet::LoadPinnedKeys(keys);
    if (!pinned.ok()) return Fail(pinned.status().message());
    if (pinned->empty()) return Fail(absl::StrCat("--builder_keys ", keys, " pins no key"));
    options.builder_keys = *std::move(pinned);
  }
  options.runner_launcher =
      absl::StrSplit(absl::GetFlag(FLAGS_runner_launcher), ' ', absl::SkipWhitespace());
  options.runner_sandbox.enabled = absl::GetFlag(FLAGS_sandbox);
  options.runner_sandbox.memory_limit_mb = absl::GetFlag(FLAGS_runner_memory_limit_mb);
  options.runner_sandbox.confine_files = absl::GetFlag(FLAGS_sandbox_files);
  // The agent runs strangers' code: without Landlock it refuses to start.
  options.runner_sandbox.require_file_confinement = options.runner_sandbox.confine_files;

  absl::StatusOr<tunefleet::proto::DeviceInfo> device = tunefleet::DetectAgentDevice(
      {.gpu_ordinal = options.gpu_device, .require_gpu = absl::GetFlag(FLAGS_gpu)});
  if (!device.ok()) return Fail(device.status().message());
  absl::StatusOr<std::unique_ptr<tunefleet::AgentDaemon>> daemon =
      tunefleet::AgentDaemon::Create(options, *std::move(device));
  if (!daemon.ok()) return Fail(daemon.status().message());
  // Declared after the daemon, so it stops serving (and reading it) first.
  tunefleet::AgentDaemon* agent = daemon->get();
  absl::StatusOr<std::unique_ptr<tunefleet::MetricsServer>> metrics = tunefleet::StartWorkerMetrics(
      options.worker, {std::make_shared<tunefleet::CallbackCounter>(
                          "tunefleet_agent_artifacts_refused_total",
                          "Artifacts refused unloaded: unsigned, tampered or signed by a "
                          "builder key the tracker does not pin",
                          [agent] { return static_cast<double>(agent->artifacts_refused()); })});
  if (!metrics.ok()) return Fail(metrics.status().message());
  (*daemon)->Start();
  const int signal = tunefleet::WaitForTerminationSignal();
  TF_LOG(INFO) << "signal " << signal << ": draining and stopping agent " << options.worker.name;
  metrics->reset();  // no scrape reads the daemon while it stops
  (*daemon)->Stop();
  return 0;
}

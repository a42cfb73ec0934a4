// tunefleet_runner: the measurement child a Runner (runner.h) spawns. It
// loads, checks and times kernels sent over its pipes, so that a kernel that
// crashes or hangs takes down only this process. Not meant to be started by
// hand; the flags are the Runner's side of the contract.
//
// Sandboxed by default: first, before any thread, its file access is
// confined (file_confinement.h); once the thread pool is up (and the GPU
// open, where there is one) and before the first request, the child limits
// itself and loads its system call filter (sandbox.h).
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "common/clock.h"
#include "common/logging.h"
#include "kernel_runtime/cuda_driver.h"
#include "kernel_runtime/file_confinement.h"
#include "kernel_runtime/runner_child.h"
#include "kernel_runtime/runner_protocol.h"
#include "kernel_runtime/sandbox.h"

ABSL_FLAG(int, request_fd, tunefleet::kRunnerRequestFd, "pipe to read RunRequests from");
ABSL_FLAG(int, result_fd, tunefleet::kRunnerResultFd, "pipe to write RunResults to");
ABSL_FLAG(int, status_fd, -1, "memfd of the shared status page, -1 for none");
ABSL_FLAG(int, parent_pid, 0, "pid of the spawning agent; exit at once if it is gone");
ABSL_FLAG(int, num_threads, 0, "kernel threads; 0 = hardware concurrency");
ABSL_FLAG(bool, pin_threads, true, "pin kernel threads to CPUs");
ABSL_FLAG(int, gpu_device, 0, "CUDA device ordinal that GPU artifacts run on");
ABSL_FLAG(std::string, cuda_driver, tunefleet::kLibCudaName,
          "CUDA driver library to dlopen for GPU artifacts (opened on the first one)");

ABSL_FLAG(bool, sandbox, true, "enter the sandbox (sandbox.h) before serving requests");
ABSL_FLAG(int64_t, memory_limit_mb, 0, "sandbox memory limit in MiB; 0 = automatic");
ABSL_FLAG(int64_t, file_size_limit_mb, 256, "sandbox file size limit in MiB");
ABSL_FLAG(int64_t, cpu_limit_s, 0, "sandbox CPU time limit in seconds; 0 = automatic");
ABSL_FLAG(bool, sandbox_files, true,
          "with --sandbox: confine file reads to the system's libraries (Landlock)");

namespace {

tunefleet::RunnerSandboxOptions SandboxOptionsFromFlags() {
  return {.enabled = absl::GetFlag(FLAGS_sandbox),
          .memory_limit_mb = absl::GetFlag(FLAGS_memory_limit_mb),
          .file_size_limit_mb = absl::GetFlag(FLAGS_file_size_limit_mb),
          .cpu_limit_s = absl::GetFlag(FLAGS_cpu_limit_s),
          .confine_files = absl::GetFlag(FLAGS_sandbox_files)};
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  // Die with the parent. The flag lands after the parent may already have
  // died, hence the getppid() check right after setting it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const int parent_pid = absl::GetFlag(FLAGS_parent_pid);
  if (parent_pid != 0 && getppid() != parent_pid) return 1;
  const tunefleet::RunnerSandboxOptions sandbox = SandboxOptionsFromFlags();
  // Files first, while this is the only thread: Landlock confines the
  // calling thread and those it starts later (the watcher, the pool, the
  // driver's), not threads already running.
  if (sandbox.enabled && sandbox.confine_files) {
    absl::Status confined =
        tunefleet::ConfineFiles(tunefleet::FileConfinementFor(absl::GetFlag(FLAGS_cuda_driver)));
    if (!confined.ok()) {
      TF_LOG(ERROR) << "tunefleet_runner: " << confined;
      return 1;
    }
  }
  tunefleet::ExitWhenParentHangsUp(absl::GetFlag(FLAGS_request_fd));

  tunefleet::RunnerStatusPage* status_page =
      tunefleet::MapRunnerStatusPage(absl::GetFlag(FLAGS_status_fd));
  tunefleet::RealClock clock;
  tunefleet::RunnerChildOptions options{.num_threads = absl::GetFlag(FLAGS_num_threads),
                                        .pin_threads = absl::GetFlag(FLAGS_pin_threads)};
  options.gpu.device_ordinal = absl::GetFlag(FLAGS_gpu_device);
  options.gpu.driver_library = absl::GetFlag(FLAGS_cuda_driver);
  const int threads = options.num_threads > 0
                          ? options.num_threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const tunefleet::SandboxLimits limits = tunefleet::ResolveSandboxLimits(sandbox, threads);
  if (sandbox.enabled) {
    options.exit_after_cpu_seconds = limits.cpu_limit_s / 2.0;
    // The PTX JIT cache would be a file write (~/.nv/ComputeCache).
    setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/1);
  }
  tunefleet::RunnerChild child(options, &clock, status_page);
  if (sandbox.enabled) {
    const bool gpu_open = child.OpenGpuBeforeSandbox();
    absl::Status entered = tunefleet::EnterSandbox(limits, status_page, {.gpu_open = gpu_open});
    if (!entered.ok()) {
      TF_LOG(ERROR) << "tunefleet_runner: " << entered;
      return 1;
    }
  }
  absl::Status served =
      child.Serve(absl::GetFlag(FLAGS_request_fd), absl::GetFlag(FLAGS_result_fd));
  if (!served.ok()) {
    TF_LOG(ERROR) << "tunefleet_runner: " << served;
    return 1;
  }
  return 0;
}

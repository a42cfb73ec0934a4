// tunefleet_runner: the measurement child a Runner (runner.h) spawns. It
// loads, checks and times kernels sent over its pipes, so that a kernel that
// crashes or hangs takes down only this process. Not meant to be started by
// hand; the flags are the Runner's side of the contract.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "common/clock.h"
#include "common/logging.h"
#include "device_agent/cuda_driver.h"
#include "device_agent/runner_child.h"
#include "device_agent/runner_protocol.h"

ABSL_FLAG(int, request_fd, tunefleet::kRunnerRequestFd, "pipe to read RunRequests from");
ABSL_FLAG(int, result_fd, tunefleet::kRunnerResultFd, "pipe to write RunResults to");
ABSL_FLAG(int, status_fd, -1, "memfd of the shared status page, -1 for none");
ABSL_FLAG(int, parent_pid, 0, "pid of the spawning agent; exit at once if it is gone");
ABSL_FLAG(int, num_threads, 0, "kernel threads; 0 = hardware concurrency");
ABSL_FLAG(bool, pin_threads, true, "pin kernel threads to CPUs");
ABSL_FLAG(int, gpu_device, 0, "CUDA device ordinal that GPU artifacts run on");
ABSL_FLAG(std::string, cuda_driver, tunefleet::kLibCudaName,
          "CUDA driver library to dlopen for GPU artifacts (opened on the first one)");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  // Die with the parent. The flag lands after the parent may already have
  // died, hence the getppid() check right after setting it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const int parent_pid = absl::GetFlag(FLAGS_parent_pid);
  if (parent_pid != 0 && getppid() != parent_pid) return 1;
  tunefleet::ExitWhenParentHangsUp(absl::GetFlag(FLAGS_request_fd));

  tunefleet::RunnerStatusPage* status_page =
      tunefleet::MapRunnerStatusPage(absl::GetFlag(FLAGS_status_fd));
  tunefleet::RealClock clock;
  tunefleet::RunnerChildOptions options{.num_threads = absl::GetFlag(FLAGS_num_threads),
                                        .pin_threads = absl::GetFlag(FLAGS_pin_threads)};
  options.gpu.device_ordinal = absl::GetFlag(FLAGS_gpu_device);
  options.gpu.driver_library = absl::GetFlag(FLAGS_cuda_driver);
  tunefleet::RunnerChild child(options, &clock, status_page);
  absl::Status served =
      child.Serve(absl::GetFlag(FLAGS_request_fd), absl::GetFlag(FLAGS_result_fd));
  if (!served.ok()) {
    TF_LOG(ERROR) << "tunefleet_runner: " << served;
    return 1;
  }
  return 0;
}

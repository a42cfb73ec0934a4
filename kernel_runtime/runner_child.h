// The measurement child's logic: takes a RunRequest (workload, shared object,
// entry name, measure options), loads and checks the kernel, times it, and
// answers a RunResult. tunefleet_runner (runner_main.cc) serves it over
// pipes; the parent side is Runner (runner.h).
//
// Kernels run in this process and may crash or hang it: that is the point of
// the separate process. Everything that outlives one request and is
// expensive to rebuild stays here across requests: the thread pool (threads
// pinned once) and the last few workloads' tensors and reference outputs.
//
// Handle() is usable in-process too (tests, or a caller that trusts its
// kernels), with no pipes involved:
//
//   RealClock clock;
//   RunnerChild child(RunnerChildOptions{.num_threads = 2}, &clock);
//   proto::RunResult result = child.Handle(request);
#ifndef TUNEFLEET_KERNEL_RUNTIME_RUNNER_CHILD_H_
#define TUNEFLEET_KERNEL_RUNTIME_RUNNER_CHILD_H_

#include <cstddef>

#include "absl/status/status.h"
#include "common/clock.h"
#include "kernel_runtime/gpu_kernel_runner.h"
#include "kernel_runtime/runner_protocol.h"
#include "kernel_runtime/tensor_data.h"
#include "kernel_runtime/thread_pool.h"
#include "proto/runner.pb.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {

struct RunnerChildOptions {
  // Kernel threads; 0 means std::thread::hardware_concurrency().
  int num_threads = 0;
  // Pin the pool's threads (and the serving thread) to CPUs; see
  // ThreadPoolOptions::pin_threads.
  bool pin_threads = true;
  // Workloads (x seeds) whose tensors and references are kept, and the
  // memory they may take (PreparedWorkloadCache).
  size_t workload_cache_capacity = PreparedWorkloadCache::kDefaultCapacity;
  int64_t workload_cache_bytes = PreparedWorkloadCache::kDefaultMaxBytes;
  // GPU artifacts: which device and driver (gpu_kernel_runner.h).
  GpuKernelRunnerOptions gpu;
  // Process CPU seconds after which the child exits after its next result
  // (must_exit()), so that a sandboxed child is replaced long before its
  // RLIMIT_CPU could stop an honest trial; 0: never.
  double exit_after_cpu_seconds = 0;
};

class RunnerChild {
 public:
  // `clock` times the kernel and the stages, and must outlive this object.
  // `status_page` (may be null) receives the current stage for the parent.
  RunnerChild(const RunnerChildOptions& options, ClockInterface* clock,
              RunnerStatusPage* status_page = nullptr);

  // Measures one request. A GPU artifact (IsGpuArtifact: PTX behind the
  // tunefleet-gpu-kernel header) goes to the GPU path (gpu_kernel_runner.h,
  // which adds COMPILE_DEVICE and INSTANTIATION_ERROR); anything else is a
  // CPU shared object. Never fails as a call: every problem is in the
  // result's error_no (a MeasureErrorNo value) and error_msg:
  //   UNKNOWN         the request itself is bad (unknown workload or args,
  //                   measure options out of range);
  //   RUNTIME_DEVICE  the artifact does not load, lacks the entry symbol, the
  //                   kernel returns non-zero, or tensors cannot be allocated;
  //   WRONG_ANSWER    outputs differ from the reference (first index named),
  //                   or the kernel wrote into an input.
  // On success, costs holds the mean seconds-per-call of each repeat, trimmed
  // (time_evaluator.h), with their spread. After the measurement, success
  // or not, the child sleeps cooldown_interval_s once (kCoolingDown). The stage
  // times (prepare_seconds, load_seconds, check_seconds, run_seconds) are
  // filled as far as the request got.
  proto::RunResult Handle(const proto::RunRequest& request);

  // Writes kRunnerHello, then answers framed requests from `request_fd` on
  // `result_fd` until the request pipe closes (returns OK) or I/O fails.
  // After a result that left the CUDA context unusable (must_exit()) it
  // publishes RunnerStage::kExiting, writes the result and returns OK, so
  // the process ends and the parent starts a fresh child.
  // Pins the calling thread when pinning is on.
  [[nodiscard]] absl::Status Serve(int request_fd, int result_fd);

  // True once a GPU kernel's fault has made CUDA unusable in this process
  // (GpuKernelRunner::context_lost): only a new process can use the GPU; or
  // once the process has used exit_after_cpu_seconds of CPU time.
  bool must_exit() const;

  // For a child about to enter its sandbox (sandbox.h), which forbids the
  // read-write opens of /dev/nvidia* the driver makes: opens the CUDA driver,
  // device and context now, and warms them up (GpuKernelRunner::WarmUp) so
  // that the driver maps the memory it creates lazily before the filter is
  // in place. True when the GPU is open (a failed warm-up is logged; only one
  // that loses the context counts as a failure). When it fails, every GPU
  // artifact is answered with that failure rather than a new attempt (which
  // the sandbox would stop).
  bool OpenGpuBeforeSandbox();

  const ThreadPool& thread_pool() const { return thread_pool_; }

 private:
  void SetStage(RunnerStage stage);
  // Handle() without the cooldown, with `options` resolved and valid.
  proto::RunResult Measure(const proto::RunRequest& request, const MeasureOptions& options);

  ClockInterface* clock_;
  RunnerStatusPage* status_page_;
  ThreadPool thread_pool_;
  PreparedWorkloadCache workloads_;
  GpuKernelRunner gpu_;
  double exit_after_cpu_seconds_;
  // Why the GPU could not be opened before the sandbox; OK otherwise.
  absl::Status gpu_open_failure_;
};

// Starts a detached thread that ends the process (_exit) as soon as every
// writer of `request_fd` is gone, i.e. the parent died, even while the main
// thread is stuck in a kernel that never returns. Complements
// PR_SET_PDEATHSIG, which fires when the parent *thread* that spawned this
// process exits rather than the parent process.
void ExitWhenParentHangsUp(int request_fd);

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_RUNNER_CHILD_H_

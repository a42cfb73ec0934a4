// The runner child's GPU path: measures a GPU artifact (common/gpu_artifact.h:
// PTX behind a launch header) on an NVIDIA GPU through the CUDA driver API
// (cuda_driver.h), with the same tensors, correctness check and time
// evaluator as the CPU path (runner_child.h), so records from both compare.
//
//   GpuKernelRunner gpu(GpuKernelRunnerOptions{.device_ordinal = 0}, &host_clock);
//   proto::RunResult result = gpu.Run(request, workload, std::move(result), set_stage);
//   if (gpu.context_lost()) ...  // the process must exit for CUDA to work again
//
// One Run:
//   load     parse the header, JIT the PTX (cuModuleLoadDataEx) and find the
//            entry; check the launch against the device's and the compiled
//            kernel's limits (threads per block after register allocation,
//            block and grid dimensions);
//   check    upload the inputs, fill the outputs with NaN, launch once, wait,
//            copy every tensor back and compare with the reference (the
//            inputs too: a kernel must not write them);
//   time     EvaluateTime over a CudaEventClock: each timed interval covers
//            `number` back-to-back launches and ends when the GPU finishes;
//            number/repeat/min_repeat_ms/cooldown as for CPUs (AutoTVM
//            recommends min_repeat_ms >= 100 on GPUs, where one launch is
//            microseconds). enable_cpu_cache_flush does not apply and is
//            ignored.
// Errors, in AutoTVM's terms (tuner_core/measure/measure.h):
//   RUNTIME_DEVICE       no usable driver or device, a malformed artifact,
//                        a kernel whose parameters do not match the
//                        workload's tensors, device memory exhausted, a
//                        launch or execution error (illegal address, ...);
//   COMPILE_DEVICE       the PTX does not JIT-compile for this GPU (the
//                        JIT's log is in the message) or lacks the entry;
//   INSTANTIATION_ERROR  the launch exceeds a limit of the device or of the
//                        compiled kernel (e.g. 1024 threads per block with
//                        too many registers per thread);
//   WRONG_ANSWER         as for CPUs; an element the kernel did not write
//                        stays NaN and fails.
// A fault that poisons the CUDA context (IsContextLost: illegal address,
// launch failure, ...) sets context_lost(); the runner child then answers and
// exits so that the agent starts a fresh one. Later Runs in this object fail
// with RUNTIME_DEVICE naming the fault.
//
// The driver is opened and the device's primary context retained on the
// first Run, so a runner child that only ever sees CPU kernels never loads
// libcuda. Device buffers are kept while consecutive requests use the same
// tensor sizes. Not thread-safe: owned by the thread that serves requests.
#ifndef TUNEFLEET_KERNEL_RUNTIME_GPU_KERNEL_RUNNER_H_
#define TUNEFLEET_KERNEL_RUNTIME_GPU_KERNEL_RUNNER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/clock.h"
#include "kernel_runtime/cuda_driver.h"
#include "kernel_runtime/runner_protocol.h"
#include "kernel_runtime/tensor_data.h"
#include "proto/runner.pb.h"

namespace tunefleet {

// The entry of the warm-up kernel (WarmUp): stores 42 to the u32 its one
// parameter points to.
inline constexpr char kGpuWarmUpEntry[] = "tunefleet_warm_up";

struct GpuKernelRunnerOptions {
  // CUDA device ordinal (as cuDeviceGet counts, after CUDA_VISIBLE_DEVICES).
  int device_ordinal = 0;
  // The driver library to dlopen.
  std::string driver_library = kLibCudaName;
  // Opens the driver instead of CudaDriver::Open(driver_library) when set
  // (tests: CudaDriver::FromApi over a fake).
  std::function<absl::StatusOr<std::unique_ptr<CudaDriver>>()> open_driver;
};

class GpuKernelRunner {
 public:
  using StageCallback = std::function<void(RunnerStage)>;

  // `host_clock` times the stages (load/check/run seconds) and sleeps the
  // cooldowns; it must outlive this object.
  GpuKernelRunner(GpuKernelRunnerOptions options, ClockInterface* host_clock);
  ~GpuKernelRunner();

  GpuKernelRunner(const GpuKernelRunner&) = delete;
  GpuKernelRunner& operator=(const GpuKernelRunner&) = delete;

  // Measures the GPU artifact in request.shared_object() on `workload`'s
  // tensors, continuing `result` (prepare_seconds already set). The request's
  // measure options must already be validated. Never fails as a call; see
  // the header comment for the error codes. `set_stage` (may be empty)
  // publishes the stage for the parent process.
  proto::RunResult Run(const proto::RunRequest& request, PreparedWorkload& workload,
                       proto::RunResult result, const StageCallback& set_stage);

  // Opens the driver, the device and its primary context unless done
  // already, and makes the context current on the calling thread. Errors:
  // FailedPrecondition "no CUDA driver: ..." / "no CUDA device: ...",
  // InvalidArgument for a device ordinal out of range, and FailedPrecondition
  // once the context is lost.
  [[nodiscard]] absl::Status OpenDevice();

  // OpenDevice(), then one launch of a one-thread kernel (kGpuWarmUpEntry)
  // through every driver path a measurement takes: PTX JIT and module load,
  // allocation, copies both ways, timing events, launch, synchronisation.
  // The driver creates some resources lazily on first use, and mapping new
  // memory opens /dev/nvidia* read-write, which the runner child's sandbox
  // forbids; a child warms up before it enters the sandbox so that a
  // measurement does not need those opens. Errors: as OpenDevice, or the
  // failing driver call (a lost context sets context_lost()).
  [[nodiscard]] absl::Status WarmUp();

  // True after a fault that leaves the CUDA context unusable.
  bool context_lost() const { return !lost_context_error_.empty(); }
  // The device, once the first Run opened it.
  const std::optional<GpuDeviceProperties>& device() const { return device_; }

 private:
  // Device buffers for `tensors` (reused when the sizes match).
  [[nodiscard]] absl::Status EnsureBuffers(const std::vector<TensorArg>& tensors);
  // Remembers `status` as the fault that lost the context, if it is one.
  void NoteFault(const absl::Status& status);

  GpuKernelRunnerOptions options_;
  ClockInterface* host_clock_;
  // Declared in this order so that buffers and the context go before the
  // driver whose entry points release them.
  std::unique_ptr<CudaDriver> driver_;
  std::optional<CudaContext> context_;
  std::optional<GpuDeviceProperties> device_;
  std::vector<DeviceBuffer> buffers_;  // per tensor of the last workload
  std::string lost_context_error_;
};

// The number of .param entries of `entry`'s parameter list in `ptx`, or
// nullopt when `ptx` declares no `.entry <entry>`.
std::optional<int> PtxEntryParamCount(absl::string_view ptx, absl::string_view entry);

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_GPU_KERNEL_RUNNER_H_

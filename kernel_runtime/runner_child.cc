#include "kernel_runtime/runner_child.h"

#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/gpu_artifact.h"
#include "common/logging.h"
#include "kernel_runtime/kernel_loader.h"
#include "kernel_runtime/measured_costs.h"
#include "kernel_runtime/staged_kernel.h"
#include "kernel_runtime/time_evaluator.h"
#include "proto_convert/run_request.h"
#include "target/host.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {
namespace {

int DefaultThreads(int requested) {
  if (requested > 0) return requested;
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware > 0 ? static_cast<int>(hardware) : 2;
}

proto::RunResult Failure(proto::RunResult result, MeasureErrorNo error_no, std::string message) {
  result.clear_costs();
  result.set_error_no(static_cast<int>(error_no));
  result.set_error_msg(std::move(message));
  return result;
}

double SecondsSince(ClockInterface& clock, int64_t start_nanos) {
  return (clock.NowNanos() - start_nanos) / 1e9;
}

}  // namespace

RunnerChild::RunnerChild(const RunnerChildOptions& options, ClockInterface* clock,
                         RunnerStatusPage* status_page)
    : clock_(clock),
      status_page_(status_page),
      thread_pool_(ThreadPoolOptions{.num_threads = DefaultThreads(options.num_threads),
                                     .pin_threads = options.pin_threads}),
      workloads_(options.workload_cache_capacity, options.workload_cache_bytes),
      gpu_(options.gpu, clock),
      exit_after_cpu_seconds_(options.exit_after_cpu_seconds) {}

bool RunnerChild::must_exit() const {
  if (gpu_.context_lost()) return true;
  if (exit_after_cpu_seconds_ <= 0) return false;
  struct timespec used;
  return clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &used) == 0 &&
         used.tv_sec + used.tv_nsec * 1e-9 >= exit_after_cpu_seconds_;
}

bool RunnerChild::OpenGpuBeforeSandbox() {
  gpu_open_failure_ = gpu_.OpenDevice();
  if (!gpu_open_failure_.ok()) return false;
  // The driver's lazily made resources, made now: in the sandbox, mapping new
  // memory (a read-write open of /dev/nvidia*) would stop the child.
  if (absl::Status warmed = gpu_.WarmUp(); !warmed.ok()) {
    TF_LOG(WARNING) << "tunefleet_runner: GPU warm-up before the sandbox failed: " << warmed;
    if (gpu_.context_lost()) {
      gpu_open_failure_ = warmed;
      return false;
    }
  }
  return true;
}

void RunnerChild::SetStage(RunnerStage stage) {
  if (status_page_ != nullptr) {
    status_page_->stage.store(static_cast<uint32_t>(stage), std::memory_order_release);
  }
}

proto::RunResult RunnerChild::Handle(const proto::RunRequest& request) {
  // Unset options take their defaults here (proto3 would read them as 0,
  // e.g. check_correctness false), then the fleet's one validation.
  const MeasureOptions options = ResolveMeasureOptions(request.options());
  if (absl::Status valid = options.Validate(); !valid.ok()) {
    return Failure(proto::RunResult(), MeasureErrorNo::kUnknown,
                   absl::StrCat("invalid measure options: ", valid.message()));
  }
  proto::RunResult result = Measure(request, options);
  // AutoTVM's cooldown: once per trial, after the measurement and outside
  // every stage time (so outside all_cost), like run_through_rpc's sleep
  // after its timestamp. It still counts against the parent's timeout, as
  // AutoTVM's sleep counts against call_func_with_timeout.
  if (options.cooldown_interval_s > 0) {
    SetStage(RunnerStage::kCoolingDown);
    clock_->SleepSeconds(options.cooldown_interval_s);
  }
  return result;
}

proto::RunResult RunnerChild::Measure(const proto::RunRequest& request,
                                      const MeasureOptions& options) {
  proto::RunResult result;

  // A GPU artifact on a host without a usable GPU fails here, before the
  // (possibly long) reference computation below.
  const bool gpu_artifact = IsGpuArtifact(request.shared_object());
  if (gpu_artifact) {
    SetStage(RunnerStage::kLoadingKernel);
    if (absl::Status usable = gpu_open_failure_.ok() ? gpu_.OpenDevice() : gpu_open_failure_;
        !usable.ok()) {
      return Failure(std::move(result), MeasureErrorNo::kRuntimeDevice,
                     absl::StrCat("cannot run a GPU kernel: ", usable.message()));
    }
  }

  // Tensors, inputs and (when checking) the reference: once per task, and
  // published so the parent does not count it against the kernel's timeout.
  SetStage(RunnerStage::kPreparingWorkload);
  const int64_t prepare_start = clock_->NowNanos();
  absl::StatusOr<PreparedWorkload*> prepared =
      workloads_.Get(request.workload_name(), request.workload_args_json(), options.input_seed);
  if (prepared.ok() && options.check_correctness) (*prepared)->ComputeReferenceIfNeeded();
  const int64_t prepare_nanos = clock_->NowNanos() - prepare_start;
  result.set_prepare_seconds(static_cast<double>(prepare_nanos) * 1e-9);
  if (status_page_ != nullptr) {
    status_page_->prepare_nanos.store(prepare_nanos, std::memory_order_release);
  }
  if (!prepared.ok()) {
    const bool bad_request = prepared.status().code() == absl::StatusCode::kInvalidArgument;
    return Failure(std::move(result),
                   bad_request ? MeasureErrorNo::kUnknown : MeasureErrorNo::kRuntimeDevice,
                   absl::StrCat(bad_request ? "invalid workload in request: " : "",
                                prepared.status().message()));
  }
  PreparedWorkload& workload = **prepared;

  if (gpu_artifact) {
    return gpu_.Run(request, workload, std::move(result),
                    [this](RunnerStage stage) { SetStage(stage); });
  }

  SetStage(RunnerStage::kLoadingKernel);
  const int64_t load_start = clock_->NowNanos();
  const std::string artifact_name =
      request.artifact_hash().empty() ? request.entry_name() : request.artifact_hash();
  absl::StatusOr<SharedObject> shared_object =
      SharedObject::LoadFromBytes(request.shared_object(), artifact_name);
  if (!shared_object.ok()) {
    result.set_load_seconds(SecondsSince(*clock_, load_start));
    return Failure(std::move(result), MeasureErrorNo::kRuntimeDevice,
                   absl::StrCat("cannot load the kernel: ", shared_object.status().message()));
  }
  const std::vector<TensorArg>& tensors = workload.workload().tensors();
  absl::StatusOr<StagedKernel> kernel = StagedKernel::Find(
      *shared_object, request.entry_name(), absl::MakeSpan(workload.kernel_args(), tensors.size()));
  result.set_load_seconds(SecondsSince(*clock_, load_start));
  if (!kernel.ok()) {
    return Failure(std::move(result), MeasureErrorNo::kRuntimeDevice,
                   absl::StrCat("cannot find the kernel entry: ", kernel.status().message()));
  }
  const TfRuntime* runtime = thread_pool_.runtime();
  auto stage_failed = [&](const char* stage, int32_t rc) {
    return Failure(std::move(result), MeasureErrorNo::kRuntimeDevice,
                   absl::StrCat("kernel returned ", rc, " ", stage,
                                " (non-zero means failure in the kernel ABI, e.g. a workspace "
                                "allocation failed)"));
  };

  // The untimed prepare stage of a staged kernel (common/kernel_abi.h), on
  // pristine inputs: what it packs is what every timed call reads.
  workload.RestoreInputs();
  if (const int32_t rc = kernel->Prepare(runtime); rc != 0)
    return stage_failed("in its prepare stage", rc);

  if (options.check_correctness) {
    SetStage(RunnerStage::kCheckRun);
    const int64_t check_start = clock_->NowNanos();
    workload.PrepareCheckRun();  // restores inputs, poisons outputs
    int32_t rc = kernel->Run(runtime);
    if (rc == 0) rc = kernel->Finish(runtime);
    if (rc != 0) {
      result.set_check_seconds(SecondsSince(*clock_, check_start));
      return stage_failed("on the correctness check run", rc);
    }
    SetStage(RunnerStage::kComparing);
    std::optional<std::string> wrong = workload.FindWrongAnswer();
    result.set_check_seconds(SecondsSince(*clock_, check_start));
    if (wrong.has_value()) {
      return Failure(std::move(result), MeasureErrorNo::kWrongAnswer,
                     absl::StrCat("wrong answer for ", workload.workload().Describe(), " (seed ",
                                  options.input_seed, "): ", *wrong));
    }
    // Inputs the kernel overwrote would skew the timings that follow.
    workload.RestoreInputs();
  }

  SetStage(RunnerStage::kTimingRuns);
  const int64_t run_start = clock_->NowNanos();
  TimeEvaluatorOptions timing = TimingOptions(options);
  if (options.enable_cpu_cache_flush) {
    // The weights: every input but the first, and the staged buffers
    // (packed weights).
    std::vector<CacheFlushRange> ranges = workload.FlushedInputRanges();
    for (const CacheFlushRange& range : kernel->StagedRanges()) ranges.push_back(range);
    timing.before_repeat = [ranges] { FlushCacheLines(ranges); };
  }
  StagedKernel* timed = &*kernel;
  absl::StatusOr<TimeEvaluation> costs =
      EvaluateTime([timed, runtime] { return timed->Run(runtime); }, timing, *clock_);
  result.set_run_seconds(SecondsSince(*clock_, run_start));
  if (!costs.ok()) {
    return Failure(std::move(result), MeasureErrorNo::kRuntimeDevice,
                   std::string(costs.status().message()));
  }
  SetTimedCosts(*costs, &result);
  result.set_error_no(static_cast<int>(MeasureErrorNo::kNoError));
  return result;
}

absl::Status RunnerChild::Serve(int request_fd, int result_fd) {
  thread_pool_.PinCallingThread();
  absl::Status hello = WriteAllBytes(result_fd, kRunnerHello, kNoDeadline);
  if (!hello.ok()) return hello;
  for (;;) {
    SetStage(RunnerStage::kIdle);
    absl::StatusOr<std::string> frame = ReadFrame(request_fd, kNoDeadline);
    if (!frame.ok()) {
      // The parent closing the pipe between requests is a normal shutdown.
      if (absl::IsUnavailable(frame.status())) return absl::OkStatus();
      return frame.status();
    }
    proto::RunRequest request;
    proto::RunResult result;
    if (!request.ParseFromString(*frame)) {
      result = Failure(
          std::move(result), MeasureErrorNo::kUnknown,
          absl::StrCat("runner child could not parse a RunRequest of ", frame->size(), " bytes"));
    } else {
      if (status_page_ != nullptr) {
        status_page_->prepare_nanos.store(0, std::memory_order_relaxed);
        status_page_->requests_received.fetch_add(1, std::memory_order_acq_rel);
      }
      result = Handle(request);
    }
    // The stage is published before the result, so a parent that has read
    // the result knows whether this process is about to end.
    SetStage(must_exit() ? RunnerStage::kExiting : RunnerStage::kWritingResult);
    absl::Status written = WriteFrame(result_fd, result.SerializeAsString(), kNoDeadline);
    if (!written.ok()) return written;
    if (must_exit()) {
      if (gpu_.context_lost()) {
        TF_LOG(WARNING) << "tunefleet_runner: exiting: the CUDA context is unusable after: "
                        << result.error_msg();
      } else {
        TF_LOG(INFO) << "tunefleet_runner: exiting: spent " << exit_after_cpu_seconds_
                     << " s of CPU time, half its limit; the runner starts a fresh child";
      }
      return absl::OkStatus();
    }
  }
}

void ExitWhenParentHangsUp(int request_fd) {
  std::thread([request_fd] {
    for (;;) {
      // No events requested: poll still reports POLLHUP (no writers left)
      // and POLLERR/POLLNVAL, and never consumes request bytes.
      struct pollfd pfd = {request_fd, 0, 0};
      if (poll(&pfd, 1, -1) > 0 && (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
        _exit(0);
      }
    }
  }).detach();
}

}  // namespace tunefleet

#include "kernel_runtime/gpu_kernel_runner.h"

#include <cctype>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/gpu_artifact.h"
#include "kernel_runtime/cuda_event_clock.h"
#include "kernel_runtime/measured_costs.h"
#include "kernel_runtime/time_evaluator.h"
#include "proto_convert/run_request.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {
namespace {

proto::RunResult Failure(proto::RunResult result, MeasureErrorNo error_no, std::string message) {
  result.clear_costs();
  result.set_error_no(static_cast<int>(error_no));
  result.set_error_msg(std::move(message));
  return result;
}

size_t TensorBytes(const TensorArg& tensor) {
  return static_cast<size_t>(tensor.NumElements()) * sizeof(float);
}

bool IsPtxIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' ||
         c == '.';
}

std::string Dims(const std::array<int64_t, 3>& dims) { return absl::StrJoin(dims, ","); }

// Why `launch` cannot run `function` on `device`, or OK. These launches
// would fail in cuLaunchKernel (INVALID_VALUE, LAUNCH_OUT_OF_RESOURCES); the
// check says which limit, in the config's terms.
[[nodiscard]] absl::Status CheckLaunchLimits(const CudaDriver& driver, CUfunction function,
                                             const GpuLaunch& launch,
                                             const GpuDeviceProperties& device) {
  static constexpr const char* kAxes[] = {"x", "y", "z"};
  for (int axis = 0; axis < 3; ++axis) {
    if (launch.block[axis] > device.max_block_dims[axis]) {
      return absl::OutOfRangeError(
          absl::StrCat("block ", Dims(launch.block), ": ", kAxes[axis], " = ", launch.block[axis],
                       " exceeds the device's maximum of ", device.max_block_dims[axis]));
    }
    if (launch.grid[axis] > device.max_grid_dims[axis]) {
      return absl::OutOfRangeError(
          absl::StrCat("grid ", Dims(launch.grid), ": ", kAxes[axis], " = ", launch.grid[axis],
                       " exceeds the device's maximum of ", device.max_grid_dims[axis]));
    }
  }
  const int64_t threads = launch.threads_per_block();
  if (threads > device.max_threads_per_block) {
    return absl::OutOfRangeError(absl::StrCat("block ", Dims(launch.block), " has ", threads,
                                              " threads; the device allows ",
                                              device.max_threads_per_block));
  }
  absl::StatusOr<int> max_threads =
      FunctionAttribute(driver, function, kCudaFuncAttrMaxThreadsPerBlock);
  if (!max_threads.ok()) return max_threads.status();
  if (threads > *max_threads) {
    absl::StatusOr<int> registers = FunctionAttribute(driver, function, kCudaFuncAttrNumRegs);
    return absl::OutOfRangeError(absl::StrCat(
        "block ", Dims(launch.block), " has ", threads, " threads; the compiled kernel allows ",
        *max_threads, " (it uses ", registers.ok() ? absl::StrCat(*registers) : "?",
        " registers per thread of the ", device.max_registers_per_block, " per block)"));
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<int> PtxEntryParamCount(absl::string_view ptx, absl::string_view entry) {
  constexpr absl::string_view kEntry = ".entry";
  for (size_t at = ptx.find(kEntry); at != absl::string_view::npos;
       at = ptx.find(kEntry, at + kEntry.size())) {
    size_t pos = at + kEntry.size();
    if (pos >= ptx.size() || !std::isspace(static_cast<unsigned char>(ptx[pos]))) continue;
    while (pos < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[pos]))) ++pos;
    const size_t name_start = pos;
    while (pos < ptx.size() && IsPtxIdentifierChar(ptx[pos])) ++pos;
    if (ptx.substr(name_start, pos - name_start) != entry) continue;
    while (pos < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[pos]))) ++pos;
    if (pos >= ptx.size() || ptx[pos] != '(') return 0;  // `.entry name { ... }`: no parameters
    const size_t close = ptx.find(')', pos);
    if (close == absl::string_view::npos) return std::nullopt;
    absl::string_view params = ptx.substr(pos, close - pos);
    int count = 0;
    for (size_t p = params.find(".param"); p != absl::string_view::npos;
         p = params.find(".param", p + 1)) {
      ++count;
    }
    return count;
  }
  return std::nullopt;
}

namespace {

// kGpuWarmUpEntry in PTX 7.0 for sm_70, which drivers from CUDA 11.0 on
// JIT-compile for any GPU the builder targets (sm_70 and newer).
constexpr char kWarmUpPtx[] = R"(.version 7.0
.target sm_70
.address_size 64

.visible .entry tunefleet_warm_up(
	.param .u64 tunefleet_warm_up_param_0
)
{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<3>;

	ld.param.u64 	%rd1, [tunefleet_warm_up_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, 42;
	st.global.u32 	[%rd2], %r1;
	ret;
}
)";

// Large enough that the copies go through the driver's staging buffers as a
// workload's tensors do.
constexpr size_t kWarmUpBytes = size_t{8} << 20;

}  // namespace

[[nodiscard]] absl::Status GpuKernelRunner::WarmUp() {
  if (absl::Status opened = OpenDevice(); !opened.ok()) return opened;
  auto noted = [this](absl::Status status) {
    NoteFault(status);
    return status;
  };
  absl::StatusOr<CudaModule> module = CudaModule::Load(*driver_, kWarmUpPtx);
  if (!module.ok()) return noted(module.status());
  absl::StatusOr<CUfunction> function = module->Function(kGpuWarmUpEntry);
  if (!function.ok()) return noted(function.status());
  absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(*driver_, kWarmUpBytes);
  if (!buffer.ok()) return noted(buffer.status());
  std::vector<uint32_t> host(kWarmUpBytes / sizeof(uint32_t), 0);
  if (absl::Status copied = buffer->CopyFromHost(host.data(), kWarmUpBytes); !copied.ok()) {
    return noted(copied);
  }
  absl::StatusOr<std::unique_ptr<CudaEventClock>> gpu_clock =
      CudaEventClock::Create(*driver_, host_clock_);
  if (!gpu_clock.ok()) return noted(gpu_clock.status());
  CUdeviceptr pointer = buffer->get();
  void* params[] = {&pointer};
  absl::Status launched =
      driver_->Check(driver_->api().cuLaunchKernel(*function, 1, 1, 1, 1, 1, 1, /*shared_bytes=*/0,
                                                   /*stream=*/nullptr, params, /*extra=*/nullptr),
                     "cuLaunchKernel(tunefleet_warm_up)");
  if (!launched.ok()) return noted(launched);
  (*gpu_clock)->NowNanos();  // records and waits for an event after the launch
  if (!(*gpu_clock)->status().ok()) return noted((*gpu_clock)->status());
  if (absl::Status synced = context_->Synchronize(); !synced.ok()) return noted(synced);
  if (absl::Status copied = buffer->CopyToHost(host.data(), kWarmUpBytes); !copied.ok()) {
    return noted(copied);
  }
  if (host[0] != 42) {
    return absl::InternalError(
        absl::StrCat("the warm-up kernel stored ", host[0], " instead of 42"));
  }
  return absl::OkStatus();
}

GpuKernelRunner::GpuKernelRunner(GpuKernelRunnerOptions options, ClockInterface* host_clock)
    : options_(std::move(options)), host_clock_(host_clock) {}

GpuKernelRunner::~GpuKernelRunner() = default;

absl::Status GpuKernelRunner::OpenDevice() {
  if (context_lost()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the CUDA context was lost to an earlier fault (", lost_context_error_,
                     "); this process must restart to use the GPU again"));
  }
  if (context_.has_value()) return context_->MakeCurrent();
  if (driver_ == nullptr) {
    absl::StatusOr<std::unique_ptr<CudaDriver>> driver =
        options_.open_driver ? options_.open_driver() : CudaDriver::Open(options_.driver_library);
    if (!driver.ok()) return driver.status();
    driver_ = std::move(driver).value();
  }
  absl::StatusOr<CUdevice> device = driver_->Device(options_.device_ordinal);
  if (!device.ok()) return device.status();
  absl::StatusOr<GpuDeviceProperties> properties = driver_->Properties(*device);
  if (!properties.ok()) return properties.status();
  properties->ordinal = options_.device_ordinal;
  absl::StatusOr<CudaContext> context = CudaContext::Retain(*driver_, *device);
  if (!context.ok()) return context.status();
  device_ = *std::move(properties);
  context_ = *std::move(context);
  return absl::OkStatus();
}

absl::Status GpuKernelRunner::EnsureBuffers(const std::vector<TensorArg>& tensors) {
  bool reusable = buffers_.size() == tensors.size();
  for (size_t t = 0; reusable && t < tensors.size(); ++t) {
    reusable = buffers_[t].bytes() == TensorBytes(tensors[t]);
  }
  if (reusable) return absl::OkStatus();
  buffers_.clear();  // free first: the new set may need the memory
  for (const TensorArg& tensor : tensors) {
    absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(*driver_, TensorBytes(tensor));
    if (!buffer.ok()) {
      buffers_.clear();
      return absl::Status(
          buffer.status().code(),
          absl::StrCat("device memory for tensor ", tensor.name, ": ", buffer.status().message()));
    }
    buffers_.push_back(*std::move(buffer));
  }
  return absl::OkStatus();
}

void GpuKernelRunner::NoteFault(const absl::Status& status) {
  if (lost_context_error_.empty() && IsContextLost(status)) {
    lost_context_error_ = std::string(status.message());
  }
}

proto::RunResult GpuKernelRunner::Run(const proto::RunRequest& request, PreparedWorkload& workload,
                                      proto::RunResult result, const StageCallback& set_stage) {
  auto stage = [&](RunnerStage s) {
    if (set_stage) set_stage(s);
  };
  auto seconds_since = [&](int64_t start) { return (host_clock_->NowNanos() - start) / 1e9; };
  const MeasureOptions options = ResolveMeasureOptions(request.options());
  const std::vector<TensorArg>& tensors = workload.workload().tensors();

  stage(RunnerStage::kLoadingKernel);
  const int64_t load_start = host_clock_->NowNanos();
  auto load_failed = [&](MeasureErrorNo error_no, std::string message) {
    result.set_load_seconds(seconds_since(load_start));
    return Failure(std::move(result), error_no, std::move(message));
  };
  absl::StatusOr<GpuArtifact> artifact = ParseGpuArtifact(request.shared_object());
  if (!artifact.ok()) {
    return load_failed(MeasureErrorNo::kRuntimeDevice,
                       absl::StrCat("cannot load the kernel: ", artifact.status().message()));
  }
  const GpuLaunch& launch = artifact->launch;
  const std::optional<int> params = PtxEntryParamCount(artifact->ptx, launch.entry);
  if (params.has_value() && *params != static_cast<int>(tensors.size())) {
    return load_failed(MeasureErrorNo::kRuntimeDevice,
                       absl::StrCat("kernel ", launch.entry, " declares ", *params,
                                    " parameters but ", workload.workload().Describe(), " has ",
                                    tensors.size(), " tensors (one pointer each)"));
  }
  if (absl::Status opened = OpenDevice(); !opened.ok()) {
    return load_failed(
        MeasureErrorNo::kRuntimeDevice,
        absl::StrCat("cannot use CUDA device ", options_.device_ordinal, ": ", opened.message()));
  }
  absl::StatusOr<CudaModule> module = CudaModule::Load(*driver_, artifact->ptx);
  if (!module.ok()) {
    NoteFault(module.status());
    return load_failed(
        MeasureErrorNo::kCompileDevice,
        absl::StrCat("the PTX does not load on ", device_->name, " (sm_",
                     device_->compute_capability_major, device_->compute_capability_minor,
                     "): ", module.status().message()));
  }
  absl::StatusOr<CUfunction> function = module->Function(launch.entry);
  if (!function.ok()) {
    NoteFault(function.status());
    return load_failed(MeasureErrorNo::kCompileDevice, std::string(function.status().message()));
  }
  if (absl::Status fits = CheckLaunchLimits(*driver_, *function, launch, *device_); !fits.ok()) {
    NoteFault(fits);
    return load_failed(absl::IsOutOfRange(fits) ? MeasureErrorNo::kInstantiationError
                                                : MeasureErrorNo::kRuntimeDevice,
                       absl::StrCat("launch does not fit ", device_->name, ": ", fits.message()));
  }
  result.set_load_seconds(seconds_since(load_start));

  // Everything below reports in terms of the stage it failed in.
  auto device_failed = [&](const absl::Status& status, absl::string_view when) {
    NoteFault(status);
    return Failure(std::move(result), MeasureErrorNo::kRuntimeDevice,
                   absl::StrCat(when, ": ", status.message(),
                                context_lost() ? "; the CUDA context is lost, so the runner "
                                                 "restarts before the next measurement"
                                               : ""));
  };
  if (absl::Status allocated = EnsureBuffers(tensors); !allocated.ok()) {
    return device_failed(allocated, "cannot allocate the tensors on the GPU");
  }
  std::vector<CUdeviceptr> pointers;
  std::vector<void*> kernel_params;
  pointers.reserve(tensors.size());
  for (const DeviceBuffer& buffer : buffers_) pointers.push_back(buffer.get());
  for (CUdeviceptr& pointer : pointers) kernel_params.push_back(&pointer);

  // Copies the host's input tensors, output tensors, or both to the device.
  auto upload = [&](bool inputs, bool outputs) -> absl::Status {
    for (size_t t = 0; t < tensors.size(); ++t) {
      if (tensors[t].is_output ? !outputs : !inputs) continue;
      absl::Status copied = buffers_[t].CopyFromHost(workload.buffer(t), TensorBytes(tensors[t]));
      if (!copied.ok()) return copied;
    }
    return absl::OkStatus();
  };
  const CudaApi& api = driver_->api();
  auto launch_once = [&]() -> absl::Status {
    return driver_->Check(
        api.cuLaunchKernel(
            *function, static_cast<unsigned>(launch.grid[0]), static_cast<unsigned>(launch.grid[1]),
            static_cast<unsigned>(launch.grid[2]), static_cast<unsigned>(launch.block[0]),
            static_cast<unsigned>(launch.block[1]), static_cast<unsigned>(launch.block[2]),
            /*shared_bytes=*/0, /*stream=*/nullptr, kernel_params.data(),
            /*extra=*/nullptr),
        absl::StrCat("cuLaunchKernel(", launch.entry, ", grid ", Dims(launch.grid), ", block ",
                     Dims(launch.block), ")"));
  };

  // Pristine inputs on the device, whatever an earlier kernel did to them.
  workload.RestoreInputs();
  if (absl::Status uploaded = upload(/*inputs=*/true, /*outputs=*/false); !uploaded.ok()) {
    return device_failed(uploaded, "copying the inputs to the GPU");
  }

  if (options.check_correctness) {
    stage(RunnerStage::kCheckRun);
    const int64_t check_start = host_clock_->NowNanos();
    workload.PrepareCheckRun();  // host: NaN in every output
    absl::Status checked = upload(/*inputs=*/false, /*outputs=*/true);
    if (checked.ok()) checked = launch_once();
    if (checked.ok()) checked = context_->Synchronize();
    if (!checked.ok()) {
      result.set_check_seconds(seconds_since(check_start));
      return device_failed(checked, "on the correctness check run");
    }
    // Inputs come back too, so a kernel that writes into one is caught.
    for (size_t t = 0; t < tensors.size() && checked.ok(); ++t) {
      checked = buffers_[t].CopyToHost(workload.buffer(t), TensorBytes(tensors[t]));
    }
    if (!checked.ok()) {
      result.set_check_seconds(seconds_since(check_start));
      return device_failed(checked, "copying the check run's tensors back from the GPU");
    }
    stage(RunnerStage::kComparing);
    std::optional<std::string> wrong = workload.FindWrongAnswer();
    result.set_check_seconds(seconds_since(check_start));
    if (wrong.has_value()) {
      return Failure(std::move(result), MeasureErrorNo::kWrongAnswer,
                     absl::StrCat("wrong answer for ", workload.workload().Describe(), " (seed ",
                                  options.input_seed, "): ", *wrong));
    }
    workload.RestoreInputs();  // the host copy, for the next request
  }

  stage(RunnerStage::kTimingRuns);
  const int64_t run_start = host_clock_->NowNanos();
  absl::StatusOr<std::unique_ptr<CudaEventClock>> gpu_clock =
      CudaEventClock::Create(*driver_, host_clock_);
  if (!gpu_clock.ok()) {
    result.set_run_seconds(seconds_since(run_start));
    return device_failed(gpu_clock.status(), "creating the timing events");
  }
  const TimeEvaluatorOptions timing = TimingOptions(options);
  // The evaluator knows only "non-zero failed"; the status says why.
  absl::Status launch_error;
  CudaEventClock* clock = gpu_clock->get();
  absl::StatusOr<TimeEvaluation> costs = EvaluateTime(
      [&]() -> int32_t {
        if (!clock->status().ok()) return 1;
        launch_error = launch_once();
        return launch_error.ok() ? 0 : 1;
      },
      timing, *clock);
  absl::Status timed = launch_error;
  if (timed.ok()) timed = clock->status();
  // A fault in the last launches surfaces only here.
  if (timed.ok()) timed = context_->Synchronize();
  result.set_run_seconds(seconds_since(run_start));
  if (!timed.ok()) return device_failed(timed, "during the timing runs");
  if (!costs.ok()) {
    return Failure(std::move(result), MeasureErrorNo::kRuntimeDevice,
                   std::string(costs.status().message()));
  }
  SetTimedCosts(*costs, &result);
  result.set_error_no(static_cast<int>(MeasureErrorNo::kNoError));
  return result;
}

}  // namespace tunefleet

#include "toolchain/builder.h"

#include <chrono>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/gpu_artifact.h"
#include "common/sha256.h"
#include "toolchain/codegen/codegen_targets.h"
#include "toolchain/codegen/llvm_backend.h"
#include "toolchain/codegen/llvm_headers.h"
#include "toolchain/gpu_kernel_info.h"
#include "toolchain/lower.h"
#include "toolchain/register_fit.h"

namespace tunefleet {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

BuildResult Failure(MeasureErrorNo error_no, std::string message, const BuildTimings& timings) {
  BuildResult result;
  result.error_no = error_no;
  result.error_msg = std::move(message);
  result.timings = timings;
  return result;
}

}  // namespace

BuildResult BuildCandidate(const Template& tmpl, const Workload& workload, const Config& config,
                           const TargetSpec& target, const BuildOptions& options) {
  BuildTimings timings;
  const Clock::time_point build_start = Clock::now();
  auto finish = [&](BuildResult r) {
    r.timings.total_seconds = SecondsSince(build_start);
    return r;
  };

  Clock::time_point start = Clock::now();
  absl::StatusOr<ir::LoweredFunc> func = tmpl.Instantiate(workload, config);
  // A tile the target's registers cannot hold would only spill: refused
  // here, before any code is generated.
  const absl::Status fits =
      func.ok() ? CheckRegisterTileFits(tmpl, workload, config, target) : func.status();
  timings.instantiate_seconds = SecondsSince(start);
  if (!fits.ok()) {
    return finish(Failure(MeasureErrorNo::kInstantiationError,
                          absl::StrCat("template ", tmpl.name(), ": ", fits.message()), timings));
  }

  if (!options.epilogue_hook_buffer.empty()) {
    func->epilogue_hook = true;
    func->epilogue_buffer = options.epilogue_hook_buffer;
  }
  start = Clock::now();
  absl::StatusOr<ir::LoweredFunc> lowered = Lower(*func);
  timings.lower_seconds = SecondsSince(start);
  if (!lowered.ok()) {
    return finish(Failure(MeasureErrorNo::kInstantiationError,
                          std::string(lowered.status().message()), timings));
  }

  std::optional<GpuKernelInfo> gpu;
  if (target.is_cuda()) {
    absl::StatusOr<GpuKernelInfo> info = AnalyzeGpuKernel(*lowered, target);
    if (!info.ok()) {
      return finish(Failure(MeasureErrorNo::kInstantiationError,
                            absl::StrCat("config exceeds the GPU's limits or cannot launch: ",
                                         info.status().message()),
                            timings));
    }
    gpu = *std::move(info);
  }

  start = Clock::now();
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module =
      CodegenLLVM(*lowered, target, context, gpu ? &gpu->launch : nullptr);
  timings.codegen_seconds = SecondsSince(start);
  if (!module.ok()) {
    const MeasureErrorNo code = module.status().code() == absl::StatusCode::kInvalidArgument
                                    ? MeasureErrorNo::kInstantiationError
                                    : MeasureErrorNo::kCompileHost;
    return finish(Failure(code, std::string(module.status().message()), timings));
  }

  BackendTimings backend;
  absl::StatusOr<std::string> object =
      OptimizeAndEmitObject(**module, target, options.opt_level, &backend);
  timings.optimize_seconds = backend.optimize_seconds;
  timings.emit_seconds = backend.emit_seconds;
  if (!object.ok()) {
    return finish(
        Failure(MeasureErrorNo::kCompileHost, std::string(object.status().message()), timings));
  }
  BuildResult result;
  if (options.keep_llvm_ir) result.llvm_ir = ModuleToString(**module);

  start = Clock::now();
  // CPU: link the object into a shared object. CUDA: the PTX behind its
  // launch header is the artifact (the driver JIT-compiles it on the agent).
  absl::StatusOr<std::string> shared_object =
      gpu ? absl::StatusOr<std::string>(FormatGpuArtifact(gpu->launch, *object))
          : LinkSharedObject(*object, target, options.link);
  timings.link_seconds = SecondsSince(start);
  if (!shared_object.ok()) {
    return finish(Failure(MeasureErrorNo::kCompileHost,
                          std::string(shared_object.status().message()), timings));
  }
  result.artifact.target = target.original;
  result.artifact.entry_name = func->name;
  result.artifact.hash = Sha256Hex(*shared_object);
  result.artifact.shared_object = std::move(*shared_object);
  result.timings = timings;
  return finish(std::move(result));
}

}  // namespace tunefleet

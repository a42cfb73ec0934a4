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
#include "tuner_core/templates/register_fit.h"

namespace tunefleet {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

[[nodiscard]] absl::Status KernelObject::status() const {
  if (ok()) return absl::OkStatus();
  return error_no == MeasureErrorNo::kInstantiationError ? absl::InvalidArgumentError(error_msg)
                                                         : absl::InternalError(error_msg);
}

KernelObject BuildKernelObject(const Template& tmpl, const Workload& workload, const Config& config,
                               const TargetSpec& target, const KernelObjectOptions& options) {
  KernelObject result;
  const Clock::time_point build_start = Clock::now();
  auto finish = [&](MeasureErrorNo error_no, absl::string_view message) {
    result.error_no = error_no;
    result.error_msg = std::string(message);
    result.timings.total_seconds = SecondsSince(build_start);
    return std::move(result);
  };

  Clock::time_point start = Clock::now();
  absl::StatusOr<ir::LoweredFunc> func = tmpl.Instantiate(workload, config);
  // A tile the target's registers cannot hold would only spill: refused
  // here, before any code is generated.
  const absl::Status fits =
      func.ok() ? CheckRegisterTileFits(tmpl, workload, config, target) : func.status();
  result.timings.instantiate_seconds = SecondsSince(start);
  if (!fits.ok()) {
    return finish(MeasureErrorNo::kInstantiationError,
                  absl::StrCat("template ", tmpl.name(), ": ", fits.message()));
  }
  if (!options.symbol.empty()) func->name = options.symbol;
  if (options.store_epilogue) {
    const std::optional<StoreEpilogue> epilogue = options.store_epilogue(*func);
    result.epilogue_in_stores =
        FuseEpilogueIntoStores(&*func, epilogue.has_value() ? &*epilogue : nullptr);
  }
  if (options.epilogue_hook && !result.epilogue_in_stores) {
    result.epilogue_buffer = options.epilogue_hook(*func);
    if (!result.epilogue_buffer.empty()) {
      func->epilogue_hook = true;
      func->epilogue_buffer = result.epilogue_buffer;
    }
  }
  start = Clock::now();
  absl::StatusOr<ir::LoweredFunc> lowered = Lower(*func);
  result.timings.lower_seconds = SecondsSince(start);
  if (!lowered.ok()) return finish(MeasureErrorNo::kInstantiationError, lowered.status().message());

  if (target.is_cuda()) {
    absl::StatusOr<GpuKernelInfo> info = AnalyzeGpuKernel(*lowered, target);
    if (!info.ok()) {
      return finish(MeasureErrorNo::kInstantiationError,
                    absl::StrCat("config exceeds the GPU's limits or cannot launch: ",
                                 info.status().message()));
    }
    result.gpu = *std::move(info);
  }

  start = Clock::now();
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module =
      CodegenLLVM(*lowered, target, context, result.gpu ? &result.gpu->launch : nullptr);
  result.timings.codegen_seconds = SecondsSince(start);
  if (!module.ok()) {
    return finish(module.status().code() == absl::StatusCode::kInvalidArgument
                      ? MeasureErrorNo::kInstantiationError
                      : MeasureErrorNo::kCompileHost,
                  module.status().message());
  }

  BackendTimings backend;
  absl::StatusOr<std::string> object =
      OptimizeAndEmitObject(**module, target, options.opt_level, &backend);
  result.timings.optimize_seconds = backend.optimize_seconds;
  result.timings.emit_seconds = backend.emit_seconds;
  if (!object.ok()) return finish(MeasureErrorNo::kCompileHost, object.status().message());
  if (options.keep_llvm_ir) result.llvm_ir = ModuleToString(**module);
  CollectExportedSymbols(**module, result.symbols);
  result.object = *std::move(object);
  result.entry_name = func->name;
  result.timings.total_seconds = SecondsSince(build_start);
  return result;
}

BuildResult BuildCandidate(const Template& tmpl, const Workload& workload, const Config& config,
                           const TargetSpec& target, const BuildOptions& options) {
  const Clock::time_point build_start = Clock::now();
  KernelObject kernel = BuildKernelObject(tmpl, workload, config, target, options);
  BuildResult result;
  result.timings = kernel.timings;
  result.llvm_ir = std::move(kernel.llvm_ir);
  auto finish = [&](MeasureErrorNo error_no, std::string message) {
    result.error_no = error_no;
    result.error_msg = std::move(message);
    result.timings.total_seconds = SecondsSince(build_start);
    return std::move(result);
  };
  if (!kernel.ok()) return finish(kernel.error_no, std::move(kernel.error_msg));

  const Clock::time_point start = Clock::now();
  // CPU: link the object into a shared object. CUDA: the PTX behind its
  // launch header is the artifact (the driver JIT-compiles it on the agent).
  absl::StatusOr<std::string> shared_object =
      kernel.gpu ? absl::StatusOr<std::string>(FormatGpuArtifact(kernel.gpu->launch, kernel.object))
                 : LinkSharedObject(kernel.object, target, options.link);
  result.timings.link_seconds = SecondsSince(start);
  if (!shared_object.ok()) {
    return finish(MeasureErrorNo::kCompileHost, std::string(shared_object.status().message()));
  }
  result.artifact.target = target.original;
  result.artifact.entry_name = kernel.entry_name;
  result.artifact.hash = Sha256Hex(*shared_object);
  result.artifact.shared_object = std::move(*shared_object);
  return finish(MeasureErrorNo::kNoError, "");
}

}  // namespace tunefleet

// The one kernel pipeline: template + workload + config -> loop nest ->
// lowered IR -> LLVM IR -> optimised object (BuildKernelObject, what the
// model compiler links many of into one library), -> shared object (lld;
// BuildCandidate, what the builder daemon and local mode measure), with the
// time of every stage. For a CUDA target: loop nest -> limits check
// (gpu_kernel_info.h) -> NVPTX -> PTX behind a launch header
// (common/gpu_artifact.h), in Artifact::shared_object. Failures come back as AutoTVM error codes
// with the reason: a config the template or the target cannot take is INSTANTIATION_ERROR (among
// them a CPU register tile the target's vector registers cannot hold: register_fit.h), a
// compiler or linker failure COMPILE_HOST.
//
// Thread-safe: each call uses its own LLVMContext, so a pool of threads can
// build a batch in parallel.
#ifndef TUNEFLEET_TOOLCHAIN_BUILDER_H_
#define TUNEFLEET_TOOLCHAIN_BUILDER_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "toolchain/codegen/llvm_backend.h"
#include "toolchain/codegen/target.h"
#include "toolchain/gpu_kernel_info.h"
#include "toolchain/linker.h"
#include "toolchain/passes/fuse_epilogue.h"
#include "tuner_core/measure/measure.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/templates/template.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

// Given the instantiated kernel, the buffer whose ready regions it passes to
// an epilogue hook (ir::OutputReady marks), as a compiled model's kernel
// with a fused epilogue does; "" for none.
using EpilogueHookChooser = std::function<std::string(const ir::LoweredFunc& kernel)>;
// Given the instantiated kernel, the epilogue its final stores compute
// (passes/fuse_epilogue.h), as a compiled model's kernel does where its
// template marks every store of the output; nullopt for none.
using StoreEpilogueChooser =
    std::function<std::optional<StoreEpilogue>(const ir::LoweredFunc& kernel)>;

struct KernelObjectOptions {
  int opt_level = 2;
  std::string symbol;                 // non-empty: the entry's name (many kernels in one library)
  bool keep_llvm_ir = false;          // fill llvm_ir (debugging)
  EpilogueHookChooser epilogue_hook;  // unset: no hook
  // Tried first: where the stores compute the epilogue, no hook is made.
  StoreEpilogueChooser store_epilogue;  // unset: none
};

struct BuildOptions : KernelObjectOptions {
  LinkOptions link;
};

struct Artifact {
  std::string target;         // the target string it was built for
  std::string entry_name;     // exported kernel symbol
  std::string shared_object;  // the .so bytes, or a GPU artifact (PTX) for CUDA targets
  std::string hash;           // hex SHA-256 of shared_object
};

struct BuildTimings {
  double instantiate_seconds = 0;  // template -> loop nest
  double lower_seconds = 0;        // IR passes
  double codegen_seconds = 0;      // IR -> LLVM IR
  double optimize_seconds = 0;     // LLVM pass pipeline
  double emit_seconds = 0;         // object emission
  double link_seconds = 0;         // lld
  double total_seconds = 0;
};

// A kernel compiled, not yet linked: an object file (CPU) or PTX (CUDA,
// with its launch in `gpu`).
struct KernelObject {
  MeasureErrorNo error_no = MeasureErrorNo::kNoError;
  std::string error_msg;
  std::string object;
  std::string entry_name;
  std::string epilogue_buffer;      // the buffer its hook is called on; "" none
  bool epilogue_in_stores = false;  // its final stores compute the epilogue
  std::optional<GpuKernelInfo> gpu;
  std::vector<ExportedSymbol> symbols;  // what `object` defines
  BuildTimings timings;
  std::string llvm_ir;

  bool ok() const { return error_no == MeasureErrorNo::kNoError; }
  // A failure as a status: INVALID_ARGUMENT for a config the template or
  // the target cannot take (INSTANTIATION_ERROR), INTERNAL for a compiler
  // failure (COMPILE_HOST).
  [[nodiscard]] absl::Status status() const;
};

KernelObject BuildKernelObject(const Template& tmpl, const Workload& workload, const Config& config,
                               const TargetSpec& target, const KernelObjectOptions& options = {});

struct BuildResult {
  MeasureErrorNo error_no = MeasureErrorNo::kNoError;
  std::string error_msg;
  Artifact artifact;
  BuildTimings timings;
  std::string llvm_ir;

  bool ok() const { return error_no == MeasureErrorNo::kNoError; }
};

BuildResult BuildCandidate(const Template& tmpl, const Workload& workload, const Config& config,
                           const TargetSpec& target, const BuildOptions& options = {});

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLCHAIN_BUILDER_H_

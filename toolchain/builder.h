// Builds one candidate kernel: template + workload + config -> loop nest ->
// lowered IR -> LLVM IR -> optimised object -> shared object (lld), with the
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

#include <string>

#include "toolchain/codegen/target.h"
#include "toolchain/linker.h"
#include "tuner_core/measure/measure.h"
#include "tuner_core/space/config_space.h"
#include "tuner_core/templates/template.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

struct BuildOptions {
  int opt_level = 2;
  LinkOptions link;
  bool keep_llvm_ir = false;  // fill BuildResult::llvm_ir (debugging)
  // Non-empty: the kernel takes an epilogue hook and calls it where its
  // template marks regions of this buffer ready (ir::OutputReady), as a
  // compiled model's kernel with a fused epilogue does.
  std::string epilogue_hook_buffer;
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

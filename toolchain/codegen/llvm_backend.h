// Optimises an LLVM module with LLVM 19's new pass manager and emits a
// relocatable object for the module's target. The loop transformations that
// matter (vectorisation, unrolling) were already done on our IR, so the
// pipeline turns LLVM's own loop vectoriser and unroller off: builds stay
// fast and the schedule the tuner chose is the code that runs.
#ifndef TUNEFLEET_TOOLCHAIN_CODEGEN_LLVM_BACKEND_H_
#define TUNEFLEET_TOOLCHAIN_CODEGEN_LLVM_BACKEND_H_

#include <string>

#include "absl/status/statusor.h"
#include "toolchain/codegen/target.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace tunefleet {

struct BackendTimings {
  double optimize_seconds = 0;
  double emit_seconds = 0;
};

// opt_level: 0-3, the -O level of the IR pipeline (2 by default). For a CUDA
// target the result is PTX text instead of an object.
[[nodiscard]] absl::StatusOr<std::string> OptimizeAndEmitObject(llvm::Module& module,
                                                                const TargetSpec& target,
                                                                int opt_level,
                                                                BackendTimings* timings);

// The optimised module as LLVM assembly text, for debugging (`tunefleet show --llvm`).
std::string ModuleToString(const llvm::Module& module);

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLCHAIN_CODEGEN_LLVM_BACKEND_H_

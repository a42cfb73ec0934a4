// Optimises an LLVM module with LLVM 19's new pass manager and emits a
// relocatable object for the module's target. The loop transformations that
// matter (vectorisation, unrolling) were already done on our IR, so the
// pipeline turns LLVM's own loop vectoriser and unroller off: builds stay
// fast and the schedule the tuner chose is the code that runs.
#ifndef TUNEFLEET_TOOLCHAIN_CODEGEN_LLVM_BACKEND_H_
#define TUNEFLEET_TOOLCHAIN_CODEGEN_LLVM_BACKEND_H_

#include <string>
#include <vector>

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

// A symbol an object defines with external linkage: a function (a kernel's
// entry points) or data (a compiled model's plan and weights).
struct ExportedSymbol {
  std::string name;
  bool function = false;
};

// The symbols `module` defines with external linkage, appended to `out`.
void CollectExportedSymbols(const llvm::Module& module, std::vector<ExportedSymbol>& out);

// The optimised module as LLVM assembly text, for debugging (`tunefleet show --llvm`).
std::string ModuleToString(const llvm::Module& module);

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLCHAIN_CODEGEN_LLVM_BACKEND_H_

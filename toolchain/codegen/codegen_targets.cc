#include "toolchain/codegen/codegen_targets.h"

namespace tunefleet {

std::unique_ptr<CodeGenLLVM> NewCodeGenForTarget(const TargetSpec& target, const GpuLaunch* launch,
                                                 llvm::LLVMContext& context) {
  if (target.is_cuda()) return NewCodeGenNVPTX(target, launch, context);
  return NewCodeGenCPU(target, context);
}

[[nodiscard]] absl::StatusOr<std::unique_ptr<llvm::Module>> CodegenLLVM(const ir::LoweredFunc& func,
                                                                        const TargetSpec& target,
                                                                        llvm::LLVMContext& context,
                                                                        const GpuLaunch* launch) {
  return NewCodeGenForTarget(target, launch, context)->Compile(func);
}

}  // namespace tunefleet

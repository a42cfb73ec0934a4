#include "toolchain/codegen/llvm_backend.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "toolchain/codegen/llvm_headers.h"

namespace tunefleet {
namespace {

llvm::OptimizationLevel ToLevel(int opt_level) {
  switch (opt_level) {
    case 0:
      return llvm::OptimizationLevel::O0;
    case 1:
      return llvm::OptimizationLevel::O1;
    case 3:
      return llvm::OptimizationLevel::O3;
    default:
      return llvm::OptimizationLevel::O2;
  }
}

}  // namespace

[[nodiscard]] absl::StatusOr<std::string> OptimizeAndEmitObject(llvm::Module& module,
                                                                const TargetSpec& target,
                                                                int opt_level,
                                                                BackendTimings* timings) {
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (llvm_target == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown triple ", target.triple, ": ", error));
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(llvm_target->createTargetMachine(
      target.triple, target.cpu, target.features, options, llvm::Reloc::PIC_, std::nullopt,
      opt_level >= 2 ? llvm::CodeGenOptLevel::Aggressive : llvm::CodeGenOptLevel::Default));
  if (machine == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot create a target machine for ", target.original));
  }
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(target.triple);

  Stopwatch watch;
  if (opt_level > 0) {
    llvm::PipelineTuningOptions tuning;
    tuning.LoopVectorization = false;
    tuning.SLPVectorization = false;
    tuning.LoopUnrolling = false;
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder builder(machine.get(), tuning);
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(ToLevel(opt_level));
    passes.run(module, mam);
  }
  if (timings) timings->optimize_seconds = watch.ElapsedSeconds();

  watch.Restart();
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager codegen;
  // NVPTX has no object format: its output is the PTX assembly the driver
  // (or ptxas) compiles for the device.
  const llvm::CodeGenFileType file_type =
      target.is_cuda() ? llvm::CodeGenFileType::AssemblyFile : llvm::CodeGenFileType::ObjectFile;
  if (machine->addPassesToEmitFile(codegen, stream, nullptr, file_type)) {
    return absl::InternalError(absl::StrCat("target ", target.original, " cannot emit objects"));
  }
  codegen.run(module);
  if (timings) timings->emit_seconds = watch.ElapsedSeconds();
  return std::string(buffer.data(), buffer.size());
}

void CollectExportedSymbols(const llvm::Module& module, std::vector<ExportedSymbol>& out) {
  for (const llvm::GlobalValue& value : module.global_values()) {
    if (value.isDeclaration() || value.hasLocalLinkage() || value.getName().empty()) continue;
    out.push_back({value.getName().str(), llvm::isa<llvm::Function>(value)});
  }
}

std::string ModuleToString(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return os.str();
}

}  // namespace tunefleet

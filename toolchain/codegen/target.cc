#include "toolchain/codegen/target.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "target/arch_registry.h"
#include "target/target_string.h"
#include "toolchain/codegen/llvm_headers.h"

namespace tunefleet {
namespace {

void InitializeTargetsOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

bool HasFeature(const llvm::MCSubtargetInfo& sti, absl::string_view name) {
  return sti.checkFeatures(absl::StrCat("+", name));
}

// PTX ISA 7.8 is the oldest that knows sm_89/sm_90 and the newest LLVM 19
// emits for every sm_70+ target; current ptxas and drivers accept it.
constexpr char kPtxFeatures[] = "+ptx78";

[[nodiscard]] absl::StatusOr<TargetSpec> CudaTargetSpec(const TargetString& parsed) {
  TargetSpec spec;
  spec.original = parsed.original;
  spec.triple = "nvptx64-nvidia-cuda";
  spec.arch = FindArch(spec.triple);
  spec.cpu = parsed.mcpu;
  spec.features = kPtxFeatures;
  const VectorShape vectors = spec.arch->Vectors([](absl::string_view) { return false; });
  spec.vector_bits = vectors.vector_bits;
  spec.max_vector_bits = vectors.max_vector_bits;
  spec.vector_registers = vectors.vector_registers;
  if (parsed.max_threads_per_block > 0) {
    spec.max_threads_per_block = static_cast<int>(parsed.max_threads_per_block);
  }
  if (parsed.max_shared_memory_per_block > 0) {
    // Static shared memory cannot exceed 48 KiB on any architecture.
    spec.max_shared_memory_per_block =
        std::min<int64_t>(parsed.max_shared_memory_per_block, 48 * 1024);
  }
  if (parsed.registers_per_block > 0) spec.registers_per_block = parsed.registers_per_block;
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(spec.triple, error);
  if (llvm_target == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("target \"", parsed.original, "\": ", error));
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      llvm_target->createMCSubtargetInfo(spec.triple, spec.cpu, spec.features));
  if (sti == nullptr || !sti->isCPUStringValid(spec.cpu) || spec.sm_version() < 70) {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", parsed.original, "\": unknown or unsupported GPU architecture \"",
                     spec.cpu, "\" (sm_70 or newer, up to sm_90 with LLVM 19)"));
  }
  return spec;
}

}  // namespace

[[nodiscard]] absl::StatusOr<TargetSpec> ParseTarget(const std::string& target) {
  // The grammar (options, values, triples) is target/target_string.h's; what
  // follows needs LLVM: the host, -mcpu=native, and whether LLVM knows the CPU.
  TF_ASSIGN_OR_RETURN(TargetString parsed, ParseTargetString(target));
  InitializeTargetsOnce();
  if (parsed.is_cuda()) return CudaTargetSpec(parsed);
  TargetSpec spec;
  spec.original = target;
  const bool host = parsed.triple.empty();
  const std::string triple = host ? llvm::sys::getDefaultTargetTriple() : parsed.triple;
  spec.triple = llvm::Triple::normalize(triple);
  spec.arch = FindArch(spec.triple);
  if (spec.arch == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("target \"", target, "\": architecture of \"",
                                                   spec.triple, "\" is not described (",
                                                   SupportedTriples(), ")"));
  }

  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(spec.triple, error);
  if (llvm_target == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", target, "\": unknown triple \"", triple, "\": ", error));
  }

  std::string cpu = parsed.mcpu;
  std::vector<std::string> features;
  if (cpu == "native") {
    if (!host && llvm::Triple(spec.triple).getArch() !=
                     llvm::Triple(llvm::sys::getDefaultTargetTriple()).getArch()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "target \"", target, "\": -mcpu=native only makes sense for the host architecture"));
    }
    cpu = llvm::sys::getHostCPUName().str();
    for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
      features.push_back(absl::StrCat(entry.getValue() ? "+" : "-", entry.getKey().str()));
    }
  }
  if (cpu.empty()) cpu = "generic";
  features.insert(features.end(), parsed.mattrs.begin(), parsed.mattrs.end());
  spec.cpu = cpu;
  spec.features = absl::StrJoin(features, ",");

  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      llvm_target->createMCSubtargetInfo(spec.triple, spec.cpu, spec.features));
  if (sti == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("target \"", target, "\": cannot describe CPU"));
  }
  if (cpu != "generic" && !sti->isCPUStringValid(cpu)) {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", target, "\": unknown CPU \"", cpu, "\" for ", spec.triple));
  }
  const VectorShape vectors =
      spec.arch->Vectors([&sti](absl::string_view feature) { return HasFeature(*sti, feature); });
  spec.vector_bits = vectors.vector_bits;
  spec.max_vector_bits = vectors.max_vector_bits;
  spec.vector_registers = vectors.vector_registers;
  return spec;
}

std::string HostTargetString() {
  InitializeTargetsOnce();
  return absl::StrCat("llvm -mcpu=", llvm::sys::getHostCPUName().str());
}

}  // namespace tunefleet

#include "builder_worker/codegen/target.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "builder_worker/codegen/llvm_headers.h"
#include "common/cuda_target.h"

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

bool HasFeature(const llvm::MCSubtargetInfo& sti, const char* name) {
  return sti.checkFeatures(absl::StrCat("+", name));
}

}  // namespace

bool TargetSpec::is_x86() const { return absl::StartsWith(triple, "x86_64"); }
bool TargetSpec::is_aarch64() const { return absl::StartsWith(triple, "aarch64"); }
bool TargetSpec::is_cuda() const { return absl::StartsWith(triple, "nvptx64"); }

int TargetSpec::sm_version() const {
  int sm = 0;
  if (!is_cuda() || !absl::StartsWith(cpu, "sm_") || !absl::SimpleAtoi(cpu.substr(3), &sm)) return 0;
  return sm;
}

namespace {

// PTX ISA 7.8 is the oldest that knows sm_89/sm_90 and the newest LLVM 19
// emits for every sm_70+ target; current ptxas and drivers accept it.
constexpr char kPtxFeatures[] = "+ptx78";

absl::StatusOr<TargetSpec> ParseCudaTarget(const std::string& target) {
  absl::StatusOr<CudaTargetFlags> flags = ParseCudaTargetFlags(target);
  if (!flags.ok()) return flags.status();
  TargetSpec spec;
  spec.original = target;
  spec.triple = "nvptx64-nvidia-cuda";
  spec.cpu = flags->arch;
  spec.features = kPtxFeatures;
  spec.vector_bits = 128;
  if (flags->max_threads_per_block > 0) {
    spec.max_threads_per_block = static_cast<int>(flags->max_threads_per_block);
  }
  if (flags->max_shared_memory_per_block > 0) {
    // Static shared memory cannot exceed 48 KiB on any architecture.
    spec.max_shared_memory_per_block = std::min<int64_t>(flags->max_shared_memory_per_block, 48 * 1024);
  }
  if (flags->registers_per_block > 0) spec.registers_per_block = flags->registers_per_block;
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(spec.triple, error);
  if (llvm_target == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("target \"", target, "\": ", error));
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      llvm_target->createMCSubtargetInfo(spec.triple, spec.cpu, spec.features));
  if (sti == nullptr || !sti->isCPUStringValid(spec.cpu) || spec.sm_version() < 70) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target \"", target, "\": unknown or unsupported GPU architecture \"", spec.cpu,
        "\" (sm_70 or newer, up to sm_90 with LLVM 19)"));
  }
  return spec;
}

}  // namespace

absl::StatusOr<TargetSpec> ParseTarget(const std::string& target) {
  InitializeTargetsOnce();
  std::vector<std::string> parts = absl::StrSplit(target, ' ', absl::SkipWhitespace());
  if (IsCudaTarget(target)) return ParseCudaTarget(target);
  if (parts.empty() || parts[0] != "llvm") {
    return absl::InvalidArgumentError(absl::StrCat(
        "target \"", target,
        "\" must start with \"llvm\" (e.g. \"llvm -mcpu=native\") or \"cuda\" (e.g. \"cuda -mcpu=sm_90\")"));
  }
  TargetSpec spec;
  spec.original = target;
  std::string triple, cpu, attrs;
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (absl::StartsWith(p, "-mtriple=")) {
      triple = p.substr(9);
    } else if (absl::StartsWith(p, "-mcpu=")) {
      cpu = p.substr(6);
    } else if (absl::StartsWith(p, "-mattr=")) {
      attrs = p.substr(7);
    } else if (absl::StartsWith(p, "-keys=") || absl::StartsWith(p, "-device=") ||
               absl::StartsWith(p, "-num-cores=")) {
      // TVM target attributes that do not change code generation here.
    } else {
      return absl::InvalidArgumentError(absl::StrCat("target \"", target, "\": unknown option \"",
                                                     p, "\" (known: -mtriple, -mcpu, -mattr)"));
    }
  }
  const bool host = triple.empty();
  if (host) triple = llvm::sys::getDefaultTargetTriple();
  spec.triple = llvm::Triple::normalize(triple);
  if (absl::StartsWith(spec.triple, "nvptx64")) {
    // "llvm -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90" means "cuda -mcpu=sm_90".
    if (!attrs.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("target \"", target, "\": -mattr is not supported for CUDA targets"));
    }
    absl::StatusOr<TargetSpec> cuda = ParseCudaTarget(absl::StrCat("cuda -mcpu=", cpu));
    if (cuda.ok()) cuda->original = target;
    return cuda;
  }

  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(spec.triple, error);
  if (llvm_target == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", target, "\": unknown triple \"", triple, "\": ", error));
  }

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
  if (!attrs.empty()) {
    for (absl::string_view a : absl::StrSplit(attrs, ',', absl::SkipEmpty())) {
      if (a.size() < 2 || (a[0] != '+' && a[0] != '-')) {
        return absl::InvalidArgumentError(absl::StrCat(
            "target \"", target, "\": -mattr entry \"", a, "\" must look like +feature or -feature"));
      }
      features.emplace_back(a);
    }
  }
  spec.cpu = cpu;
  spec.features = absl::StrJoin(features, ",");

  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      llvm_target->createMCSubtargetInfo(spec.triple, spec.cpu, spec.features));
  if (sti == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("target \"", target, "\": cannot describe CPU"));
  }
  if (cpu != "generic" && !sti->isCPUStringValid(cpu)) {
    return absl::InvalidArgumentError(absl::StrCat("target \"", target, "\": unknown CPU \"", cpu,
                                                   "\" for ", spec.triple));
  }
  if (spec.is_x86()) {
    spec.vector_bits = HasFeature(*sti, "avx512f") ? 512 : (HasFeature(*sti, "avx") ? 256 : 128);
    spec.max_vector_bits = spec.vector_bits;
  } else {
    spec.vector_bits = 128;
    spec.max_vector_bits = spec.is_aarch64() ? 4 * 128 : 128;
  }
  return spec;
}

std::string HostTargetString() {
  InitializeTargetsOnce();
  return absl::StrCat("llvm -mcpu=", llvm::sys::getHostCPUName().str());
}

}  // namespace tunefleet

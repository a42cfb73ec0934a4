#include "builder_worker/codegen/target.h"

#include <mutex>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "builder_worker/codegen/llvm_headers.h"

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

absl::StatusOr<TargetSpec> ParseTarget(const std::string& target) {
  InitializeTargetsOnce();
  std::vector<std::string> parts = absl::StrSplit(target, ' ', absl::SkipWhitespace());
  if (parts.empty() || parts[0] != "llvm") {
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", target, "\" must start with \"llvm\" (e.g. \"llvm -mcpu=native\")"));
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
  } else {
    spec.vector_bits = 128;
  }
  return spec;
}

std::string HostTargetString() {
  InitializeTargetsOnce();
  return absl::StrCat("llvm -mcpu=", llvm::sys::getHostCPUName().str());
}

}  // namespace tunefleet

// One description per architecture (Halide's Target, LLVM's TargetInfo):
// everything the code generator's vector model, the register-fit check, a
// compiled model's feature check, device reports and the measuring host need
// to know about x86-64, AArch64 or NVPTX. Each architecture is one class in
// its own folder (target/x86_64, target/aarch64, target/nvptx64), listed once
// in arch_registry.cc's AllArchs(); code elsewhere asks an Arch, not the
// triple.
//
//   const Arch* arch = FindArch("aarch64-linux-gnu");  // by triple or `uname -m`
//   VectorShape v = arch->Vectors([&](absl::string_view f) { return has(f); });
//   arch->Family(v, "cortex-a72");                     // "aarch64-neon"
//
// A new target is a folder with its Arch (and, if the fleet measures on it,
// its host.cc: target/host.h), one line in AllArchs(), its guard in
// host_other.cc and its sources in target/BUILD.
#ifndef TUNEFLEET_TARGET_ARCH_H_
#define TUNEFLEET_TARGET_ARCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace tunefleet {

// A target's vector registers as the code generator and register fit see them.
struct VectorShape {
  // Widest native vector register in bits (128 SSE/NEON, 256 AVX, 512 AVX-512).
  int vector_bits = 128;
  // Widest fp32 vector a kernel may use: the native width where registers
  // are few, several registers ganged where LLVM splits wider vectors cheaply.
  int max_vector_bits = 128;
  // Architectural vector registers of vector_bits each; 0 where not counted
  // (GPUs: their launch limits apply instead).
  int vector_registers = 0;
};

// An LLVM subtarget feature ("+avx2", "+neon") and the name the machine's
// kernel reports it by (/proc/cpuinfo flags on x86, HWCAP names on AArch64).
struct FeatureName {
  const char* llvm;
  const char* host;
};

// Whether the feature named (in the caller's spelling) is present.
using FeatureTest = absl::FunctionRef<bool(absl::string_view)>;

class Arch {
 public:
  virtual ~Arch() = default;

  // The triple's first component and `uname -m`: "x86_64", "aarch64", "nvptx64".
  virtual absl::string_view name() const = 0;
  // e_machine of the objects built for it (62 EM_X86_64, 183 EM_AARCH64); 0
  // where artifacts are not ELF objects (PTX).
  virtual uint16_t elf_machine() const = 0;
  // Whether its kernels run on a GPU: artifacts are PTX, launch limits apply.
  virtual bool is_gpu() const { return false; }

  // --- Code generation ---
  // The vector registers of a CPU with these LLVM features ("avx512f").
  virtual VectorShape Vectors(FeatureTest has_llvm_feature) const = 0;
  // The family whose tuned configs carry over between CPUs (the shipped
  // records' key): "x86_64-avx512", "aarch64-neon", "cuda-sm_90".
  virtual std::string Family(const VectorShape& vectors, absl::string_view cpu) const = 0;
  // The assembler's name of one vector register ("zmm", "q"), for messages.
  virtual absl::string_view VectorRegisterName(int vector_bits) const = 0;
  // Whether an FMA may take one vector operand straight from memory
  // (x86's vfmadd231ps ymm, ymm, [mem]), so the register tile need not hold it.
  virtual bool FmaReadsMemoryOperand() const { return false; }
  // The features a compiled model built with given LLVM features needs on the
  // machine that opens it: pairs of LLVM name and host name.
  virtual absl::Span<const FeatureName> ModelFeatures() const { return {}; }

  // --- The machine, from what its kernel reports ---
  // /proc/cpuinfo's label of the feature line ("flags", "Features"); "" for GPUs.
  virtual absl::string_view CpuinfoFeatureLabel() const { return ""; }
  // The features worth reporting for a device key or a record, in report
  // order, of those `has_host_feature` says the machine has.
  virtual std::vector<std::string> ReportedFeatures(FeatureTest has_host_feature) const {
    return {};
  }
  // fp32 lanes of the widest vector the machine's features allow; 0 when
  // none of this architecture's vector features is present.
  virtual int Fp32Lanes(FeatureTest has_host_feature) const { return 0; }
  // LLVM's -mcpu for the machine a /proc/cpuinfo text describes, "" when it
  // is not recognised (informational: a device's "native").
  virtual std::string LlvmCpuName(absl::string_view cpuinfo, FeatureTest has_host_feature) const {
    return "";
  }

 protected:
  // Those of `names` that `has` says are present, in order.
  static std::vector<std::string> Present(absl::Span<const char* const> names, FeatureTest has) {
    std::vector<std::string> present;
    for (const char* name : names) {
      if (has(name)) present.push_back(name);
    }
    return present;
  }
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TARGET_ARCH_H_

#include "target/x86_64/arch.h"

#include "absl/strings/match.h"
#include "target/cpuinfo.h"

namespace tunefleet {
namespace {

// What fp32 kernels can reach; a compiled model names them so that a
// library opened on a CPU without them is refused instead of dying of SIGILL.
constexpr FeatureName kModelFeatures[] = {
    {"+sse4.2", "sse4_2"},     {"+avx", "avx"},           {"+avx2", "avx2"},
    {"+fma", "fma"},           {"+avx512f", "avx512f"},   {"+avx512bw", "avx512bw"},
    {"+avx512dq", "avx512dq"}, {"+avx512vl", "avx512vl"}, {"+amx-tile", "amx_tile"}};

// Worth knowing when choosing a device key or reading a record.
constexpr const char* kReportedFeatures[] = {
    "sse4_2",      "avx",      "avx2",     "fma",      "f16c",        "avx512f",
    "avx512cd",    "avx512dq", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16",
    "avx512_fp16", "avx_vnni", "amx_tile", "amx_int8", "amx_bf16"};

class X86_64 final : public Arch {
 public:
  absl::string_view name() const override { return "x86_64"; }
  uint16_t elf_machine() const override { return 62; }  // EM_X86_64

  VectorShape Vectors(FeatureTest has_llvm_feature) const override {
    VectorShape shape;
    shape.vector_bits = has_llvm_feature("avx512f") ? 512 : has_llvm_feature("avx") ? 256 : 128;
    // AVX2 has only 16 registers: no ganging beyond the native width.
    shape.max_vector_bits = shape.vector_bits;
    shape.vector_registers = shape.vector_bits == 512 ? 32 : 16;
    return shape;
  }

  std::string Family(const VectorShape& vectors, absl::string_view cpu) const override {
    return vectors.vector_bits >= 512   ? "x86_64-avx512"
           : vectors.vector_bits >= 256 ? "x86_64-avx2"
                                        : "x86_64-sse";
  }

  absl::string_view VectorRegisterName(int vector_bits) const override {
    return vector_bits >= 512 ? "zmm" : vector_bits >= 256 ? "ymm" : "xmm";
  }

  bool FmaReadsMemoryOperand() const override { return true; }
  absl::Span<const FeatureName> ModelFeatures() const override { return kModelFeatures; }
  absl::string_view CpuinfoFeatureLabel() const override { return "flags"; }

  std::vector<std::string> ReportedFeatures(FeatureTest has_host_feature) const override {
    return Present(kReportedFeatures, has_host_feature);
  }

  int Fp32Lanes(FeatureTest has) const override {
    if (has("avx512f")) return 16;
    if (has("avx") || has("avx2") || has("fma")) return 8;
    if (has("sse4_2")) return 4;
    return 0;
  }

  // A coarse guess from the vendor and feature set: right for the common
  // server parts, "" when nothing fits.
  std::string LlvmCpuName(absl::string_view cpuinfo, FeatureTest has) const override {
    if (absl::StrContains(CpuinfoValue(cpuinfo, "model name"), "AMD")) {
      if (has("avx512f")) return "znver4";
      if (has("vaes") && has("avx2")) return "znver3";
      if (has("avx2")) return "znver2";
      return "";
    }
    if (has("amx_tile")) return "sapphirerapids";
    if (has("avx512_vnni")) return "cascadelake";
    if (has("avx512f")) return "skylake-avx512";
    if (has("avx2") && has("fma")) return "haswell";
    return "";
  }
};

}  // namespace

const Arch& X86_64Arch() {
  static const X86_64 arch;
  return arch;
}

}  // namespace tunefleet

#include "target/aarch64/arch.h"

#include <utility>

#include "absl/strings/match.h"
#include "target/cpuinfo.h"

namespace tunefleet {
namespace {

// Only what fp32 kernels can reach: crc/aes/sha never appear in them.
constexpr FeatureName kModelFeatures[] = {
    {"+fp-armv8", "fp"}, {"+neon", "asimd"}, {"+fullfp16", "fphp"}, {"+dotprod", "asimddp"},
    {"+sve", "sve"},     {"+sve2", "sve2"},  {"+i8mm", "i8mm"},     {"+bf16", "bf16"}};

// Worth knowing when choosing a device key or reading a record ("neon" is
// reported whenever the kernel says "asimd": TVM's arm_cpu name for it).
constexpr const char* kReportedFeatures[] = {"neon", "asimd", "asimdhp", "asimddp", "fphp",
                                             "i8mm", "bf16",  "sve",     "sve2"};

// LLVM's name for an ARM core, from /proc/cpuinfo's "CPU part" number.
constexpr std::pair<const char*, const char*> kCpuParts[] = {
    {"0xd03", "cortex-a53"},  {"0xd04", "cortex-a35"},  {"0xd05", "cortex-a55"},
    {"0xd07", "cortex-a57"},  {"0xd08", "cortex-a72"},  {"0xd09", "cortex-a73"},
    {"0xd0a", "cortex-a75"},  {"0xd0b", "cortex-a76"},  {"0xd0c", "neoverse-n1"},
    {"0xd0d", "cortex-a77"},  {"0xd40", "neoverse-v1"}, {"0xd41", "cortex-a78"},
    {"0xd49", "neoverse-n2"}, {"0xd4f", "neoverse-v2"}};

// Linux uapi asm/hwcap.h (arm64).
constexpr std::pair<int, const char*> kHwcap[] = {
    {0, "fp"},       {1, "asimd"},   {2, "evtstrm"},   {3, "aes"},       {4, "pmull"},
    {5, "sha1"},     {6, "sha2"},    {7, "crc32"},     {8, "atomics"},   {9, "fphp"},
    {10, "asimdhp"}, {11, "cpuid"},  {12, "asimdrdm"}, {13, "jscvt"},    {14, "fcma"},
    {15, "lrcpc"},   {16, "dcpop"},  {17, "sha3"},     {18, "sm3"},      {19, "sm4"},
    {20, "asimddp"}, {21, "sha512"}, {22, "sve"},      {23, "asimdfhm"}, {24, "dit"},
    {25, "uscat"},   {26, "ilrcpc"}, {27, "flagm"},    {28, "ssbs"},     {29, "sb"},
    {30, "paca"},    {31, "pacg"}};
constexpr std::pair<int, const char*> kHwcap2[] = {
    {0, "dcpodp"},    {1, "sve2"},      {2, "sveaes"},   {3, "svepmull"}, {4, "svebitperm"},
    {5, "svesha3"},   {6, "svesm4"},    {7, "flagm2"},   {8, "frint"},    {9, "svei8mm"},
    {10, "svef32mm"}, {11, "svef64mm"}, {12, "svebf16"}, {13, "i8mm"},    {14, "bf16"}};

class Aarch64 final : public Arch {
 public:
  absl::string_view name() const override { return "aarch64"; }
  uint16_t elf_machine() const override { return 183; }  // EM_AARCH64

  // 128-bit NEON registers, 32 of them: 8- and 16-lane vectors live in 2 or
  // 4 registers (LLVM splits them), as TVM's ARM schedules rely on.
  VectorShape Vectors(FeatureTest has_llvm_feature) const override {
    VectorShape shape;
    shape.vector_bits = 128;
    shape.max_vector_bits = 4 * 128;
    shape.vector_registers = 32;
    return shape;
  }

  std::string Family(const VectorShape& vectors, absl::string_view cpu) const override {
    return "aarch64-neon";
  }

  absl::string_view VectorRegisterName(int vector_bits) const override { return "q"; }
  absl::Span<const FeatureName> ModelFeatures() const override { return kModelFeatures; }
  absl::string_view CpuinfoFeatureLabel() const override { return "Features"; }

  std::vector<std::string> ReportedFeatures(FeatureTest has_host_feature) const override {
    return Present(kReportedFeatures, [&](absl::string_view feature) {
      return has_host_feature(feature) || (feature == "neon" && has_host_feature("asimd"));
    });
  }

  int Fp32Lanes(FeatureTest has) const override {
    if (has("sve") || has("sve2")) return 64;  // SVE allows up to 2048-bit vectors
    if (has("neon") || has("asimd")) return 4;
    return 0;
  }

  std::string LlvmCpuName(absl::string_view cpuinfo, FeatureTest has_host_feature) const override {
    const std::string part = CpuinfoValue(cpuinfo, "CPU part");
    for (const auto& [number, name] : kCpuParts) {
      if (absl::EqualsIgnoreCase(part, number)) return name;
    }
    return "";
  }
};

}  // namespace

const Arch& Aarch64Arch() {
  static const Aarch64 arch;
  return arch;
}

std::string Aarch64HwcapNames(uint64_t hwcap, uint64_t hwcap2) {
  std::string names;
  auto add = [&names](const char* name) {
    if (!names.empty()) names += ' ';
    names += name;
  };
  for (const auto& [bit, name] : kHwcap) {
    if (hwcap & (uint64_t{1} << bit)) add(name);
  }
  for (const auto& [bit, name] : kHwcap2) {
    if (hwcap2 & (uint64_t{1} << bit)) add(name);
  }
  return names;
}

}  // namespace tunefleet

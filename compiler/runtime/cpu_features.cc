#include "compiler/runtime/cpu_features.h"

#include <sys/auxv.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"

namespace tunefleet {
namespace {

// Linux uapi asm/hwcap.h (arm64); spelled out so any host decodes them.
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

}  // namespace

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

std::string CpuinfoFeatureLine(const std::string& cpuinfo, absl::string_view label) {
  for (absl::string_view line : absl::StrSplit(cpuinfo, '\n')) {
    if (!absl::ConsumePrefix(&line, label)) continue;
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, ":")) continue;
    return std::string(absl::StripAsciiWhitespace(line));
  }
  return "";
}

std::string HostCpuFeatures() {
  std::string features;
#if defined(__aarch64__)
  features = Aarch64HwcapNames(getauxval(AT_HWCAP), getauxval(AT_HWCAP2));
  constexpr char kLabel[] = "Features";
#else
  constexpr char kLabel[] = "flags";
#endif
  absl::StatusOr<std::string> cpuinfo = ReadFileToString("/proc/cpuinfo", kMaxConfigFileBytes);
  if (cpuinfo.ok()) {
    const std::string line = CpuinfoFeatureLine(*cpuinfo, kLabel);
    if (!line.empty()) features = features.empty() ? line : features + " " + line;
  }
  return features;
}

}  // namespace tunefleet

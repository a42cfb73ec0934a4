#include "target/cpuinfo.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"

namespace tunefleet {

std::string CpuinfoValue(absl::string_view cpuinfo, absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(cpuinfo, '\n')) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    if (absl::StripAsciiWhitespace(line.substr(0, colon)) == key) {
      return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  }
  return "";
}

std::string ReadHostCpuinfo() {
  return ReadFileToString("/proc/cpuinfo", kMaxConfigFileBytes).value_or("");
}

}  // namespace tunefleet

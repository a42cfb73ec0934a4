#include "target/cpuinfo.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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

int64_t ParseCacheSize(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  int64_t unit = 1;
  if (!text.empty()) {
    switch (absl::ascii_toupper(text.back())) {
      case 'K':
        unit = int64_t{1} << 10;
        break;
      case 'M':
        unit = int64_t{1} << 20;
        break;
      case 'G':
        unit = int64_t{1} << 30;
        break;
      default:
        break;
    }
    if (unit > 1) text.remove_suffix(1);
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value <= 0 || value > (int64_t{1} << 40) / unit) return 0;
  return value * unit;
}

int64_t HostLastLevelCacheBytes() {
  int best_level = 0;
  int64_t bytes = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = absl::StrCat("/sys/devices/system/cpu/cpu0/cache/index", index);
    absl::StatusOr<std::string> level = ReadFileToString(dir + "/level", kMaxSmallFileBytes);
    if (!level.ok()) break;  // the indices are consecutive
    int n = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*level), &n) || n < best_level) continue;
    const int64_t size =
        ParseCacheSize(ReadFileToString(dir + "/size", kMaxSmallFileBytes).value_or(""));
    if (size > 0 && (n > best_level || size > bytes)) {
      best_level = n;
      bytes = size;
    }
  }
  return bytes;
}

}  // namespace tunefleet

#include "metrics/process_stats.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

// The largest read here, <root>/stat, is a few KiB even with hundreds of
// cores; ReadFileToString counts the cap while reading (/proc files report
// size 0).
[[nodiscard]] absl::StatusOr<std::string> ReadProcFile(const std::string& path) {
  return ReadFileToString(path, kMaxConfigFileBytes);
}

template <typename T>
[[nodiscard]] absl::StatusOr<T> ParseNumber(absl::string_view text, const std::string& path,
                                            absl::string_view what) {
  T value{};
  if (!absl::SimpleAtoi(text, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", what, " is '", text, "', not a number"));
  }
  return value;
}

struct StatFields {
  double cpu_ticks = 0;
  double start_ticks = 0;  // since boot
  double virtual_bytes = 0;
  double resident_pages = 0;
};

// proc(5): "pid (comm) state ppid ..."; comm may hold spaces and ')', so the
// fields are counted from the last ')'. Field 3 (state) is rest[0].
[[nodiscard]] absl::StatusOr<StatFields> ParseProcessStat(const std::string& text,
                                                          const std::string& path) {
  const size_t close = text.rfind(')');
  if (close == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no ')' after the command name"));
  }
  const std::vector<absl::string_view> rest =
      absl::StrSplit(absl::string_view(text).substr(close + 1), ' ', absl::SkipWhitespace());
  constexpr size_t kUtime = 14 - 3, kStime = 15 - 3, kStartTime = 22 - 3, kVsize = 23 - 3,
                   kRss = 24 - 3;
  if (rest.size() <= kRss) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", rest.size() + 2, " fields, expected at least 24"));
  }
  StatFields fields;
  TF_ASSIGN_OR_RETURN(const uint64_t utime, ParseNumber<uint64_t>(rest[kUtime], path, "utime"));
  TF_ASSIGN_OR_RETURN(const uint64_t stime, ParseNumber<uint64_t>(rest[kStime], path, "stime"));
  TF_ASSIGN_OR_RETURN(const uint64_t start,
                      ParseNumber<uint64_t>(rest[kStartTime], path, "starttime"));
  TF_ASSIGN_OR_RETURN(const uint64_t vsize, ParseNumber<uint64_t>(rest[kVsize], path, "vsize"));
  TF_ASSIGN_OR_RETURN(const int64_t rss, ParseNumber<int64_t>(rest[kRss], path, "rss"));
  fields.cpu_ticks = static_cast<double>(utime + stime);
  fields.start_ticks = static_cast<double>(start);
  fields.virtual_bytes = static_cast<double>(vsize);
  fields.resident_pages = static_cast<double>(rss);
  return fields;
}

// The "btime <seconds>" line of <root>/stat.
[[nodiscard]] absl::StatusOr<double> ParseBootTime(const std::string& text,
                                                   const std::string& path) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, "btime ")) {
      TF_ASSIGN_OR_RETURN(const uint64_t seconds,
                          ParseNumber<uint64_t>(absl::StripAsciiWhitespace(line), path, "btime"));
      return static_cast<double>(seconds);
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(path, ": no btime line"));
}

// The soft limit on the "Max open files" line of <process>/limits.
[[nodiscard]] absl::StatusOr<double> ParseMaxFds(const std::string& text, const std::string& path) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "Max open files")) continue;
    const std::vector<absl::string_view> columns =
        absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (columns.empty()) break;
    if (columns[0] == "unlimited") return std::numeric_limits<double>::infinity();
    TF_ASSIGN_OR_RETURN(const uint64_t soft,
                        ParseNumber<uint64_t>(columns[0], path, "Max open files"));
    return static_cast<double>(soft);
  }
  return absl::InvalidArgumentError(absl::StrCat(path, ": no 'Max open files' line"));
}

// Entries of <process>/fd (the directory stream's own descriptor included,
// as in the other Prometheus clients).
[[nodiscard]] absl::StatusOr<double> CountOpenFds(const std::string& path) {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return absl::NotFoundError(absl::StrCat("cannot list ", path));
  double count = 0;
  while (const dirent* entry = readdir(dir)) {
    const absl::string_view name = entry->d_name;
    if (name != "." && name != "..") ++count;
  }
  closedir(dir);
  return count;
}

}  // namespace

[[nodiscard]] absl::StatusOr<ProcessStats> ReadProcessStats(const ProcFiles& files) {
  const long ticks = files.ticks_per_second > 0 ? files.ticks_per_second : sysconf(_SC_CLK_TCK);
  const long page = files.page_bytes > 0 ? files.page_bytes : sysconf(_SC_PAGESIZE);
  if (ticks <= 0 || page <= 0) {
    return absl::InternalError("sysconf gave no clock tick or page size");
  }
  const std::string process_dir = absl::StrCat(files.proc_root, "/", files.process);
  const std::string stat_path = process_dir + "/stat";
  const std::string limits_path = process_dir + "/limits";
  const std::string boot_path = files.proc_root + "/stat";

  TF_ASSIGN_OR_RETURN(const std::string stat_text, ReadProcFile(stat_path));
  TF_ASSIGN_OR_RETURN(const StatFields stat, ParseProcessStat(stat_text, stat_path));
  TF_ASSIGN_OR_RETURN(const std::string boot_text, ReadProcFile(boot_path));
  TF_ASSIGN_OR_RETURN(const double boot_time, ParseBootTime(boot_text, boot_path));
  TF_ASSIGN_OR_RETURN(const std::string limits_text, ReadProcFile(limits_path));

  ProcessStats stats;
  TF_ASSIGN_OR_RETURN(stats.max_fds, ParseMaxFds(limits_text, limits_path));
  TF_ASSIGN_OR_RETURN(stats.open_fds, CountOpenFds(process_dir + "/fd"));
  stats.cpu_seconds = stat.cpu_ticks / static_cast<double>(ticks);
  stats.start_time_seconds = boot_time + stat.start_ticks / static_cast<double>(ticks);
  stats.virtual_memory_bytes = stat.virtual_bytes;
  stats.resident_memory_bytes = stat.resident_pages * static_cast<double>(page);
  return stats;
}

}  // namespace tunefleet

// ReadProcessStats: the figures behind the standard Prometheus process
// metrics (process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds,
// process_start_time_seconds), read from Linux's /proc at call time, the way
// the Go and Python clients read them. Call it at scrape time; it does a few
// small reads and no caching.
//
//   TF_ASSIGN_OR_RETURN(ProcessStats stats, ReadProcessStats());
//   std::cout << stats.resident_memory_bytes;
//
// Tests point ProcFiles at a fake /proc tree with fixed tick and page sizes.
#ifndef TUNEFLEET_METRICS_PROCESS_STATS_H_
#define TUNEFLEET_METRICS_PROCESS_STATS_H_

#include <string>

#include "absl/status/statusor.h"

namespace tunefleet {

struct ProcessStats {
  double cpu_seconds = 0;  // user + system
  double resident_memory_bytes = 0;
  double virtual_memory_bytes = 0;
  double open_fds = 0;
  double max_fds = 0;             // the soft limit; +Inf when unlimited
  double start_time_seconds = 0;  // since the Unix epoch
};

// Where the figures come from. The defaults read this process.
struct ProcFiles {
  std::string proc_root = "/proc";  // holds `stat` (boot time) and the process directory
  std::string process = "self";     // the process directory under proc_root
  long ticks_per_second = 0;        // 0: sysconf(_SC_CLK_TCK)
  long page_bytes = 0;              // 0: sysconf(_SC_PAGESIZE)
};

// Reads <root>/<process>/stat, <root>/<process>/limits, <root>/<process>/fd
// and <root>/stat. Errors name the file that was missing or malformed
// (NotFound, InvalidArgument).
[[nodiscard]] absl::StatusOr<ProcessStats> ReadProcessStats(const ProcFiles& files = {});

}  // namespace tunefleet

#endif  // TUNEFLEET_METRICS_PROCESS_STATS_H_

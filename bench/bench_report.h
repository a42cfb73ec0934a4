// Summary figures for benchmark reports: geometric means of ratios, the
// worst task, and how busy the rest of the machine was while timing (other
// work skews every figure, so reports say so); and writing a report to the
// file a benchmark's --json flag names.
#ifndef TUNEFLEET_BENCH_BENCH_REPORT_H_
#define TUNEFLEET_BENCH_BENCH_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace bench {

// 0 for an empty list.
double Geomean(const std::vector<double>& v);

// {"tasks_compared", "geomean_ratio", "min_ratio", "min_ratio_task",
// "min_ratio_label"} of one column of ratios; indices[i] and labels[i]
// name the task of ratios[i].
nlohmann::json RatioSummary(const std::vector<double>& ratios, const std::vector<int>& indices,
                            const std::vector<std::string>& labels);

// CPU cores kept busy by other work: /proc/stat sampled over `seconds`
// while this process is idle; -1 when /proc/stat cannot be read.
double OtherBusyCores(double seconds = 0.5);

// Writes `report` to `path` (indented by 2, newline-terminated), replacing
// the file; does nothing when `path` is empty (no --json given). Internal
// naming the path when the file cannot be written.
[[nodiscard]] absl::Status WriteJsonReport(const std::string& path, const nlohmann::json& report);

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_BENCH_REPORT_H_

// Summary figures for benchmark reports: geometric means of ratios, the
// worst task, and how busy the rest of the machine was while timing (other
// work skews every figure, so reports say so).
#ifndef TUNEFLEET_BENCH_BENCH_REPORT_H_
#define TUNEFLEET_BENCH_BENCH_REPORT_H_

#include <string>
#include <vector>

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

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_BENCH_REPORT_H_

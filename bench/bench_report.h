// Summary figures for benchmark reports: geometric means of ratios, the
// worst task, and how busy the rest of the machine was while timing (other
// work skews every figure, so reports say so), the machine's FMA peak measured
// in the same run (figures as a fraction of it); and writing a report to the
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

// The machine's fp32 FMA peak at one thread count, as cpu_fma_peak measured
// it in its own process (AVX-512 or AVX2 chosen at run time).
struct FmaPeak {
  double gflops = 0;    // median of the rounds; 0 when the measurement failed
  std::string isa;      // "avx512" or "avx2"; empty when it failed
  nlohmann::json json;  // what cpu_fma_peak printed: {"gflops", "isa", "runs"} or {"error"}
};

// Runs cpu_fma_peak (built beside the running benchmark, which must list it
// in its data) with `threads` threads for `rounds` rounds: about 0.05 s a
// round on an AVX-512 core. `isa` "avx2": ymm FMAs even where AVX-512 is
// there (the peak of code built for AVX2); empty: the widest the CPU has.
FmaPeak MeasureFmaPeak(int threads, int rounds = 3, const std::string& isa = "");

// gflops / peak.gflops; 0 when the peak is unknown.
double FractionOfPeak(double gflops, const FmaPeak& peak);

// Writes `report` to `path` (indented by 2, newline-terminated), replacing
// the file; does nothing when `path` is empty (no --json given). Internal
// naming the path when the file cannot be written.
[[nodiscard]] absl::Status WriteJsonReport(const std::string& path, const nlohmann::json& report);

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_BENCH_REPORT_H_

// How the reference GEMM binaries (openblas_sgemm, onednn_sgemm) time a call
// and print their figure, so that every library is measured the same way:
// rounds of at least 0.2 s each (the time evaluator's min_repeat_ms = 200),
// GFLOPS per round, the median and the rounds as one JSON line.
//
//   std::vector<double> gflops = TimeGemmRounds([&] { cblas_sgemm(...); }, 2.0 * m * n * k, 5);
//   PrintGflopsJson(gflops, "coretype", openblas_get_corename());
#ifndef TUNEFLEET_BENCH_GEMM_TIMING_H_
#define TUNEFLEET_BENCH_GEMM_TIMING_H_

#include <functional>
#include <string>
#include <vector>

namespace tunefleet::bench {

// One warm-up call, then `rounds` rounds; each round repeats `call` until it
// has run for at least 0.2 s and yields flops * calls / seconds / 1e9.
std::vector<double> TimeGemmRounds(const std::function<void()>& call, double flops, int rounds);

// {"gflops": <median>, "<label_key>": "<label>", "runs": [...]} on stdout.
void PrintGflopsJson(const std::vector<double>& gflops, const std::string& label_key,
                     const std::string& label);

}  // namespace tunefleet::bench

#endif  // TUNEFLEET_BENCH_GEMM_TIMING_H_

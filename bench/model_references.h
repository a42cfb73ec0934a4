// The vendor references model_bench compares tuned kernels against, timed in
// the same run at the same thread count: oneDNN for convolutions (direct and
// auto, the faster) and OpenBLAS cblas_sgemm per batch item for batch
// matmuls (in its own process, as shipped and with OPENBLAS_CORETYPE for
// this CPU; the faster).
#ifndef TUNEFLEET_BENCH_MODEL_REFERENCES_H_
#define TUNEFLEET_BENCH_MODEL_REFERENCES_H_

#include <functional>
#include <string>
#include <vector>

#include "bench/model_suites.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace bench {

struct Reference {
  double seconds = 0;  // 0: failed
  std::string detail;  // algorithm or OpenBLAS core type
  nlohmann::json json;
};

// Each reference: the best of 3 repeats of at least `min_seconds`.
Reference OneDnnReference(const BenchTask& t, int threads, double min_seconds);
// `coretype`: OpenBlasCoreTypeForThisCpu(), or "" to run as shipped only.
Reference OpenBlasReference(const BenchTask& t, int threads, const std::string& coretype,
                            double min_seconds);

// A tuned winner (`config` of task `t`'s default template for `target`)
// measured like the references: 3 repeats of at least `min_seconds` in a
// fresh runner child, the fastest repeat's per-run seconds. 0 on failure
// (the reason in *error).
double RemeasureWinner(const BenchTask& t, const std::string& target, const nlohmann::json& config,
                       int threads, double min_seconds, std::string* error);

// The re-measured winner and the reference, `rounds` (at least 1) times in
// turn (ours, then the reference, each round), so a slow spell of the
// machine falls on both; each side's figure is the median of its successful
// rounds, the reference's details those of its median round. `ours`
// (may be empty: the reference alone) returns seconds, or 0 with the reason
// in its argument.
struct Interleaved {
  double ours_seconds = 0;  // 0: every round failed (ours_error says why)
  std::string ours_error;   // the last failed round's reason
  int ours_failed_rounds = 0;
  std::vector<double> ours_rounds;  // seconds of the successful rounds, in order
  Reference reference;              // seconds: the median of reference_rounds
  std::vector<double> reference_rounds;
  int reference_failed_rounds = 0;
};
Interleaved MeasureInterleaved(const std::function<double(std::string* error)>& ours,
                               const std::function<Reference()>& reference, int rounds);

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_MODEL_REFERENCES_H_

// The vendor references model_bench compares tuned kernels against, timed in
// the same run at the same thread count: oneDNN for convolutions (direct and
// auto, the faster) and OpenBLAS cblas_sgemm per batch item for batch
// matmuls (in its own process, as shipped and with OPENBLAS_CORETYPE for
// this CPU; the faster).
#ifndef TUNEFLEET_BENCH_MODEL_REFERENCES_H_
#define TUNEFLEET_BENCH_MODEL_REFERENCES_H_

#include <string>

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

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_MODEL_REFERENCES_H_

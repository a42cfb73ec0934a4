// OpenBLAS reference for batch matmul benchmarks: one cblas_sgemm per batch
// item (row-major), C[b] = A[b] * B[b]^T when b_is_nk (B[b] is n x k), else
// C[b] = A[b] * B[b] (B[b] is k x n). A[b] is m x k, C[b] is m x n; items are
// contiguous. Threads via openblas_set_num_threads (Debian's pthread OpenBLAS),
// which is process-wide and is left set on return.
#ifndef TUNEFLEET_BENCH_OPENBLAS_BATCH_MATMUL_H_
#define TUNEFLEET_BENCH_OPENBLAS_BATCH_MATMUL_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {
namespace bench {

// The computation itself (no thread setting); sizes must be positive.
[[nodiscard]] absl::Status OpenBlasBatchMatmul(int64_t batch, int64_t m, int64_t n, int64_t k,
                                               bool b_is_nk, const float* a, const float* b,
                                               float* c);

// Best per-call time of the whole batch: random inputs, 3 warm-up calls, then
// 3 repeats, each calling until at least `min_seconds` elapsed (at least one
// call); the minimum per-call mean over repeats.
[[nodiscard]] absl::StatusOr<double> OpenBlasBatchMatmulSeconds(int64_t batch, int64_t m, int64_t n,
                                                                int64_t k, bool b_is_nk,
                                                                int threads,
                                                                double min_seconds = 0.5);

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_OPENBLAS_BATCH_MATMUL_H_

#include "bench/openblas_batch_matmul.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>
#include <vector>

namespace tunefleet {
namespace bench {
namespace {

[[nodiscard]] absl::Status CheckSizes(int64_t batch, int64_t m, int64_t n, int64_t k) {
  if (batch <= 0 || m <= 0 || n <= 0 || k <= 0) {
    return absl::InvalidArgumentError("batch matmul: sizes must be positive");
  }
  constexpr int64_t kMaxBlasInt = std::numeric_limits<blasint>::max();
  if (m > kMaxBlasInt || n > kMaxBlasInt || k > kMaxBlasInt) {
    return absl::InvalidArgumentError("batch matmul: sizes exceed OpenBLAS's integer type");
  }
  return absl::OkStatus();
}

void Run(int64_t batch, int64_t m, int64_t n, int64_t k, bool b_is_nk, const float* a,
         const float* b, float* c) {
  const size_t a_step = static_cast<size_t>(m) * k, b_step = static_cast<size_t>(n) * k,
               c_step = static_cast<size_t>(m) * n;
  for (int64_t i = 0; i < batch; ++i) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, b_is_nk ? CblasTrans : CblasNoTrans, m, n, k, 1.0f,
                a + i * a_step, k, b + i * b_step, b_is_nk ? k : n, 0.0f, c + i * c_step, n);
  }
}

}  // namespace

[[nodiscard]] absl::Status OpenBlasBatchMatmul(int64_t batch, int64_t m, int64_t n, int64_t k,
                                               bool b_is_nk, const float* a, const float* b,
                                               float* c) {
  if (absl::Status st = CheckSizes(batch, m, n, k); !st.ok()) return st;
  Run(batch, m, n, k, b_is_nk, a, b, c);
  return absl::OkStatus();
}

[[nodiscard]] absl::StatusOr<double> OpenBlasBatchMatmulSeconds(int64_t batch, int64_t m, int64_t n,
                                                                int64_t k, bool b_is_nk,
                                                                int threads, double min_seconds) {
  if (absl::Status st = CheckSizes(batch, m, n, k); !st.ok()) return st;
  if (threads < 1) return absl::InvalidArgumentError("threads must be >= 1");
  if (!(min_seconds >= 0)) return absl::InvalidArgumentError("min_seconds must be >= 0");
  openblas_set_num_threads(threads);
  std::vector<float> a(static_cast<size_t>(batch) * m * k), b(static_cast<size_t>(batch) * n * k),
      c(static_cast<size_t>(batch) * m * n);
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& x : a) x = dist(gen);
  for (float& x : b) x = dist(gen);
  auto call = [&] { Run(batch, m, n, k, b_is_nk, a.data(), b.data(), c.data()); };
  for (int i = 0; i < 3; ++i) call();
  double best = std::numeric_limits<double>::infinity();
  using Clock = std::chrono::steady_clock;
  for (int rep = 0; rep < 3; ++rep) {
    int64_t calls = 0;
    double elapsed = 0;
    const auto start = Clock::now();
    do {
      call();
      ++calls;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < min_seconds);
    best = std::min(best, elapsed / calls);
  }
  return best;
}

}  // namespace bench
}  // namespace tunefleet

// Reference for bench/dense_bench: times OpenBLAS cblas_sgemm on one shape in
// its own process (OpenBLAS's thread pool must not share a process with
// ours). Prints one JSON object: {"gflops": median, "runs": [...]}.
//   openblas_sgemm M N K threads rounds layout(NK|KN)
#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/gemm_timing.h"

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s M N K threads rounds NK|KN\n", argv[0]);
    return 2;
  }
  const int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]);
  const int threads = std::atoi(argv[4]), rounds = std::atoi(argv[5]);
  const bool nk = std::string(argv[6]) == "NK";
  openblas_set_num_threads(threads);
  std::vector<float> a(static_cast<size_t>(m) * k, 0.5f), b(static_cast<size_t>(n) * k, 0.25f),
      c(static_cast<size_t>(m) * n);
  auto call = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, nk ? CblasTrans : CblasNoTrans, m, n, k, 1.0f,
                a.data(), k, b.data(), nk ? k : n, 0.0f, c.data(), n);
  };
  const std::vector<double> gflops =
      tunefleet::bench::TimeGemmRounds(call, 2.0 * m * n * k, rounds);
  tunefleet::bench::PrintGflopsJson(gflops, "coretype", openblas_get_corename());
  return 0;
}

// Reference for bench/model_bench: OpenBlasBatchMatmulSeconds on one shape in
// its own process, so OPENBLAS_CORETYPE (read when OpenBLAS loads) can differ
// between runs and OpenBLAS's thread pool does not share a process with the
// benchmark's. Prints one JSON object:
//   {"seconds": best per-call time, "gflops": ..., "coretype": "<OpenBLAS core>"}
//   openblas_batch_matmul_seconds B M N K threads min_seconds NK|KN
#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/openblas_batch_matmul.h"

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s B M N K threads min_seconds NK|KN\n", argv[0]);
    return 2;
  }
  const long long batch = std::atoll(argv[1]), m = std::atoll(argv[2]), n = std::atoll(argv[3]),
                  k = std::atoll(argv[4]);
  const int threads = std::atoi(argv[5]);
  const double min_seconds = std::atof(argv[6]);
  const std::string layout = argv[7];
  if (layout != "NK" && layout != "KN") {
    std::fprintf(stderr, "layout must be NK or KN, got %s\n", layout.c_str());
    return 2;
  }
  auto seconds = tunefleet::bench::OpenBlasBatchMatmulSeconds(batch, m, n, k, layout == "NK",
                                                              threads, min_seconds);
  if (!seconds.ok()) {
    std::printf("{\"error\": \"%s\"}\n", std::string(seconds.status().message()).c_str());
    return 1;
  }
  std::printf("{\"seconds\": %.9g, \"gflops\": %.3f, \"coretype\": \"%s\"}\n", *seconds,
              2.0 * batch * m * n * k / *seconds / 1e9, openblas_get_corename());
  return 0;
}

// Reference for bench/dense_bench: times OpenBLAS cblas_sgemm on one shape in
// its own process (OpenBLAS's thread pool must not share a process with
// ours). Prints one JSON object: {"gflops": median, "runs": [...]}.
//   openblas_sgemm M N K threads rounds layout(NK|KN)
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

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
  call();
  const double flops = 2.0 * m * n * k;
  std::vector<double> gflops;
  for (int r = 0; r < rounds; ++r) {
    // Like the time evaluator with min_repeat_ms = 200: enough calls per round.
    int number = 1;
    double seconds = 0;
    while (true) {
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < number; ++i) call();
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (seconds >= 0.2) break;
      number = std::max(number * 2, static_cast<int>(0.2 / (seconds / number)) + 1);
    }
    gflops.push_back(flops * number / seconds / 1e9);
  }
  std::vector<double> sorted = gflops;
  std::sort(sorted.begin(), sorted.end());
  std::printf("{\"gflops\": %.3f, \"coretype\": \"%s\", \"runs\": [", sorted[sorted.size() / 2],
              openblas_get_corename());
  for (size_t i = 0; i < gflops.size(); ++i) std::printf("%s%.3f", i ? ", " : "", gflops[i]);
  std::printf("]}\n");
  return 0;
}

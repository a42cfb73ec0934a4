// The machine's fp32 FMA peak for the benchmarks, in its own process: each
// thread (pinned to its own CPU among those the process may use, so that under
// taskset the peak is the allowed CPUs') runs 12 independent chains of vector FMAs
// (zmm with AVX-512, else ymm with AVX2+FMA, chosen at run time, never
// assumed, or ymm when asked for "avx2") for a fixed count; GFLOPS =
// 2 * lanes * FMAs / wall time. One untimed round first: the first round
// after an idle spell runs while the cores leave their low clocks.
// Prints one JSON object: {"gflops": median of rounds, "isa": ..., "runs": [...]}.
//   cpu_fma_peak threads rounds [avx2]
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "kernel_runtime/thread_pool.h"

namespace {

constexpr int64_t kIterations = 20'000'000;

__attribute__((target("avx512f"))) float ChainsAvx512(float seed) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(seed + i);
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < kIterations; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
  }
  __m512 sum = acc[0];
  for (int i = 1; i < 12; ++i) sum = _mm512_add_ps(sum, acc[i]);
  // Summed through memory: GCC 12's _mm512_reduce_add_ps reads an
  // undefined register and warns (-Wuninitialized) in its own header.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

__attribute__((target("avx2,fma"))) float ChainsAvx2(float seed) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(seed + i);
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < kIterations; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
  }
  __m256 sum = acc[0];
  for (int i = 1; i < 12; ++i) sum = _mm256_add_ps(sum, acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 4 && std::string(argv[3]) == "avx2")) {
    std::fprintf(stderr, "usage: %s threads rounds [avx2]\n", argv[0]);
    return 2;
  }
  const int threads = std::atoi(argv[1]), rounds = std::atoi(argv[2]);
  __builtin_cpu_init();
  const bool avx512 = argc == 3 && __builtin_cpu_supports("avx512f");
  if (!avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    std::printf("{\"error\": \"neither AVX-512 nor AVX2+FMA\"}\n");
    return 1;
  }
  const int lanes = avx512 ? 16 : 8;
  std::vector<int> cpus = tunefleet::AllowedCpus();
  if (cpus.empty()) cpus.push_back(0);
  std::vector<double> gflops;
  volatile float sink = 0;
  for (int r = -1; r < rounds; ++r) {  // round -1: the untimed warm-up
    std::vector<std::thread> pool;
    std::vector<float> out(threads);
    auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        tunefleet::PinThisThreadTo(cpus[t % cpus.size()]);
        out[t] = avx512 ? ChainsAvx512(t) : ChainsAvx2(t);
      });
    }
    for (std::thread& th : pool) th.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (float v : out) sink = sink + v;
    if (r < 0) continue;
    gflops.push_back(2.0 * lanes * 12 * kIterations * threads / seconds / 1e9);
  }
  std::vector<double> sorted = gflops;
  std::sort(sorted.begin(), sorted.end());
  std::printf("{\"gflops\": %.3f, \"isa\": \"%s\", \"runs\": [", sorted[sorted.size() / 2],
              avx512 ? "avx512" : "avx2");
  for (size_t i = 0; i < gflops.size(); ++i) std::printf("%s%.3f", i ? ", " : "", gflops[i]);
  std::printf("]}\n");
  return 0;
}

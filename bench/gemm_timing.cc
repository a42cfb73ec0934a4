#include "bench/gemm_timing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace tunefleet::bench {

std::vector<double> TimeGemmRounds(const std::function<void()>& call, double flops, int rounds) {
  call();
  std::vector<double> gflops;
  for (int r = 0; r < rounds; ++r) {
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
  return gflops;
}

void PrintGflopsJson(const std::vector<double>& gflops, const std::string& label_key,
                     const std::string& label) {
  std::vector<double> sorted = gflops;
  std::sort(sorted.begin(), sorted.end());
  std::printf("{\"gflops\": %.3f, \"%s\": \"%s\", \"runs\": [", sorted[sorted.size() / 2],
              label_key.c_str(), label.c_str());
  for (size_t i = 0; i < gflops.size(); ++i) std::printf("%s%.3f", i ? ", " : "", gflops[i]);
  std::printf("]}\n");
}

}  // namespace tunefleet::bench

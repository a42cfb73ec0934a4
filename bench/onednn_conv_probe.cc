// Sanity check for the oneDNN reference: GFLOPS of ResNet-18's 64->64 3x3
// pad-1 convolution on 56x56 (batch 1) at 1 and 2 threads.
//   onednn_conv_probe [min_seconds]
#include <cstdio>
#include <cstdlib>

#include "bench/onednn_reference.h"

int main(int argc, char** argv) {
  using tunefleet::bench::ConvShape;
  const double min_seconds = argc > 1 ? std::atof(argv[1]) : 0.5;
  ConvShape s;
  s.n = 1, s.c = 64, s.h = 56, s.w = 56, s.k = 64, s.r = 3, s.s = 3;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
  const double flops = tunefleet::bench::ConvFlops(s);
  for (int threads : {1, 2}) {
    auto t = tunefleet::bench::OneDnnConvSeconds(s, threads, min_seconds);
    if (!t.ok()) {
      std::fprintf(stderr, "threads=%d: %s\n", threads, t.status().ToString().c_str());
      return 1;
    }
    std::printf(
        "resnet18 conv 64->64 3x3 56x56 threads=%d: %.3f ms  %.1f GFLOPS  (%.1f/thread)  %s\n",
        threads, t->seconds * 1e3, flops / t->seconds / 1e9, flops / t->seconds / 1e9 / threads,
        t->algorithm.c_str());
  }
  return 0;
}

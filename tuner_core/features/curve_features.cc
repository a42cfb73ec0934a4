#include "tuner_core/features/curve_features.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tunefleet::features {
namespace {

double Log2p(double x) { return std::log2(1.0 + std::max(x, 0.0)); }

}  // namespace

void AppendCurveFeatures(const LoopNestAnalysis& nest, std::vector<float>& out) {
  const size_t start = out.size();
  out.resize(start + kCurveFeatureLength, 0.0f);
  const int num_buffers = static_cast<int>(nest.buffers.size());
  // A buffer's weight: its accesses under the loop that sees the most of them.
  std::vector<double> weight(num_buffers, 0.0);
  for (const LoopInfo& loop : nest.loops) {
    for (const BufferTouch& t : loop.touches)
      weight[t.buffer] = std::max(weight[t.buffer], t.accesses);
  }
  std::vector<int> order(num_buffers);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return weight[a] > weight[b]; });

  for (int slot = 0; slot < std::min(kCurveBuffers, num_buffers); ++slot) {
    const int buffer = order[slot];
    float* reuse_curve = out.data() + start + static_cast<size_t>(slot) * 2 * kCurveSamples;
    float* count_curve = reuse_curve + kCurveSamples;
    for (const LoopInfo& loop : nest.loops) {
      for (const BufferTouch& t : loop.touches) {
        if (t.buffer != buffer) continue;
        const double log_bytes = Log2p(t.bytes);
        const float reuse = static_cast<float>(Log2p(t.Reuse()));
        const float count = static_cast<float>(Log2p(t.accesses));
        // The point counts for every sample at or above its footprint.
        for (int s = std::max(0, static_cast<int>(std::ceil(log_bytes / 2.0))); s < kCurveSamples;
             ++s) {
          reuse_curve[s] = std::max(reuse_curve[s], reuse);
          count_curve[s] = std::max(count_curve[s], count);
        }
      }
    }
  }
}

}  // namespace tunefleet::features

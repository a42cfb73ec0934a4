#include "tuner_core/features/itervar_features.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tunefleet::features {
namespace {

float Log2p(double x) { return static_cast<float>(std::log2(1.0 + std::max(x, 0.0))); }

// FNV-1a: stable across runs, platforms and standard libraries.
uint32_t NameHash(const std::string& name) {
  uint32_t h = 2166136261u;
  for (unsigned char c : name) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

int KindSlot(ir::ForKind kind) {
  switch (kind) {
    case ir::ForKind::kSerial:
      return 0;
    case ir::ForKind::kParallel:
      return 1;
    case ir::ForKind::kVectorized:
      return 2;
    case ir::ForKind::kUnrolled:
      return 3;
    case ir::ForKind::kBlockIdxX:
    case ir::ForKind::kBlockIdxY:
    case ir::ForKind::kBlockIdxZ:
    case ir::ForKind::kThreadIdxX:
    case ir::ForKind::kThreadIdxY:
    case ir::ForKind::kThreadIdxZ:
      return 4;
  }
  return 0;
}

}  // namespace

void AppendItervarFeatures(const LoopNestAnalysis& nest, std::vector<float>& out) {
  const size_t start = out.size();
  out.resize(start + kItervarFeatureLength, 0.0f);
  // Slots first follow the hottest loop's chain of enclosing loops, outer to
  // inner, so slot d is the loop at depth d of the main computation in every
  // config (loop order and tiling show up in fixed places); the remaining
  // slots take the other loops, most iterations first (ties in program order).
  const int total = static_cast<int>(nest.loops.size());
  std::vector<int> order;
  order.reserve(total);
  int hottest = -1;
  for (int i = 0; i < total; ++i) {
    if (hottest < 0 || nest.loops[i].iterations > nest.loops[hottest].iterations) hottest = i;
  }
  std::vector<char> taken(total, 0);
  for (int i = hottest; i >= 0; i = nest.loops[i].parent) {
    order.push_back(i);
    taken[i] = 1;
  }
  std::reverse(order.begin(), order.end());
  const size_t chain = order.size();
  for (int i = 0; i < total; ++i) {
    if (!taken[i]) order.push_back(i);
  }
  std::stable_sort(order.begin() + chain, order.end(), [&](int a, int b) {
    return nest.loops[a].iterations > nest.loops[b].iterations;
  });
  const int num_loops = std::min<int>(kItervarLoops, total);
  std::vector<const BufferTouch*> touches;
  bool used[kItervarLoops] = {};
  for (int rank = 0; rank < num_loops; ++rank) {
    const LoopInfo& loop = nest.loops[order[rank]];
    int slot = static_cast<int>(NameHash(loop.var) % kItervarLoops);
    while (used[slot]) slot = (slot + 1) % kItervarLoops;
    used[slot] = true;
    float* f = out.data() + start + static_cast<size_t>(slot) * kItervarPerLoop;
    f[0] = Log2p(static_cast<double>(loop.extent));
    f[1] = Log2p(loop.iterations);
    f[2] = static_cast<float>(loop.depth);
    f[3 + KindSlot(loop.kind)] = 1.0f;  // f[7]: GPU-bound
    touches.clear();
    for (const BufferTouch& t : loop.touches) touches.push_back(&t);
    const int num_buffers = std::min<int>(kItervarBuffers, static_cast<int>(touches.size()));
    std::partial_sort(touches.begin(), touches.begin() + num_buffers, touches.end(),
                      [](const BufferTouch* a, const BufferTouch* b) {
                        if (a->accesses != b->accesses) return a->accesses > b->accesses;
                        return a->buffer < b->buffer;
                      });
    for (int b = 0; b < num_buffers; ++b) {
      float* g = f + kItervarLoopFields + b * kItervarBufferFields;
      g[0] = Log2p(touches[b]->bytes);
      g[1] = Log2p(touches[b]->Reuse());
      g[2] = Log2p(touches[b]->stride);
      g[3] = Log2p(touches[b]->accesses);
    }
  }
}

}  // namespace tunefleet::features

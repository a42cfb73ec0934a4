// The runtime's channel copies, one copier for both: a relayout between
// channel blocks and row widths, and a gather of channels (channel_gather).
#include <cstring>

#include "compiler/runtime/ops.h"
#include "compiler/runtime/vector_math.h"

namespace tunefleet {
namespace {

using namespace runtime_ops;  // NOLINT: ParallelFor, TF_VECTOR_CLONES

// CopyRuns with runs of kRun floats: one vector load and store each.
template <int kRun>
TF_VECTOR_CLONES void CopyFixedRuns(const float* __restrict in, int64_t in_stride,
                                    float* __restrict out, int64_t out_stride, int64_t count) {
  for (int64_t x = 0; x < count; ++x) {
    std::memcpy(out + x * out_stride, in + x * in_stride, kRun * sizeof(float));
  }
}

// out[x * out_stride + i] = in[x * in_stride + i] for i < run, x < count.
TF_VECTOR_CLONES void CopyRuns(const float* __restrict in, int64_t in_stride, float* __restrict out,
                               int64_t out_stride, int64_t run, int64_t count) {
  // The blocks' common widths (a loop of 4 to 16 iterations of unknown
  // count is not vectorised well).
  if (run == 4) return CopyFixedRuns<4>(in, in_stride, out, out_stride, count);
  if (run == 8) return CopyFixedRuns<8>(in, in_stride, out, out_stride, count);
  if (run == 16) return CopyFixedRuns<16>(in, in_stride, out, out_stride, count);
  for (int64_t x = 0; x < count; ++x) {
    for (int64_t i = 0; i < run; ++i) out[x * out_stride + i] = in[x * in_stride + i];
  }
}

// Channel blocks up to this wide are gathered pixel by pixel (CopyChannels).
constexpr int64_t kMaxGatherLanes = 64;

// dst's channel c (laid out as dst_layout, dims its shape) = src's channel
// map[c] (src_layout; map null: c itself). One destination row (n,
// channel block, y) per task; each pixel's lanes are copied as runs of
// channels contiguous on both sides.
void CopyChannels(const PlanBuffer& src_layout, const float* src, const PlanBuffer& dst_layout,
                  float* dst, const int64_t* map, const TfRuntime* rt) {
  const int64_t n = dst_layout.shape[0], c = dst_layout.shape[1], h = dst_layout.shape[2],
                w = dst_layout.shape[3];
  const int64_t src_c = src_layout.shape[1];
  const int64_t sb = src_layout.block, sw = src_layout.RowWidth();
  const int64_t db = dst_layout.block, dw = dst_layout.RowWidth();
  auto source = [&](int64_t ch) { return map == nullptr ? ch : map[ch]; };
  ParallelFor(rt, n * (c / db) * h, n * c * h * w, [&](int64_t t) {
    const int64_t y = t % h, cb = (t / h) % (c / db), image = t / (h * (c / db));
    float* out = dst + t * dw * db;
    auto in_at = [&](int64_t ch) {
      return src + (((image * (src_c / sb) + ch / sb) * h + y) * sw) * sb + ch % sb;
    };
    const int64_t first = source(cb * db);
    bool one_run = first % sb + db <= sb;  // the block's channels follow on in one source block
    for (int64_t l = 1; l < db && one_run; ++l) one_run = source(cb * db + l) == first + l;
    if (one_run && sb == db) {  // only the rows' width changes
      std::memcpy(out, in_at(first), w * db * sizeof(float));
      return;
    }
    if (one_run && db >= 4) {
      CopyRuns(in_at(first), sb, out, db, db, w);
      return;
    }
    if (one_run) {  // a lane or few (NCHW's): one strided walk each
      for (int64_t l = 0; l < db; ++l) {
        const float* in = in_at(first + l);
        for (int64_t x = 0; x < w; ++x) out[x * db + l] = in[x * sb];
      }
      return;
    }
    if (map != nullptr && db <= kMaxGatherLanes) {
      // Pixel by pixel, the lanes in order: the writes contiguous, the
      // reads from as many source blocks as the lanes' channels fall in.
      const float* lane[kMaxGatherLanes];
      for (int64_t l = 0; l < db; ++l) lane[l] = in_at(source(cb * db + l));
      for (int64_t x = 0; x < w; ++x) {
        for (int64_t l = 0; l < db; ++l) out[x * db + l] = lane[l][x * sb];
      }
      return;
    }
    for (int64_t l = 0; l < db;) {
      const int64_t ch = source(cb * db + l);
      int64_t run = 1;  // lanes whose channels follow on in one source block
      while (l + run < db && source(cb * db + l + run) == ch + run && (ch + run) % sb != 0) ++run;
      const float* in = in_at(ch);
      if (run == 1) {  // a lane on its own (a shuffle's, NCHW's): one strided walk
        for (int64_t x = 0; x < w; ++x) out[x * db + l] = in[x * sb];
      } else {
        CopyRuns(in, sb, out + l, db, run, w);
      }
      l += run;
    }
  });
}

}  // namespace

void Relayout(const PlanBuffer& src_layout, const float* src, const PlanBuffer& dst_layout,
              float* dst, const TfRuntime* rt) {
  CopyChannels(src_layout, src, dst_layout, dst, nullptr, rt);
}

void ChannelGather(const PlanStep& step, const PlanBuffer& in_layout, const float* in,
                   const PlanBuffer& out_layout, float* out, const TfRuntime* rt) {
  CopyChannels(in_layout, in, out_layout, out, step.indices.data(), rt);
}

}  // namespace tunefleet

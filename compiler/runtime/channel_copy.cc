// The runtime's channel copies, one copier for both: a relayout between
// channel blocks and row widths, and a gather of channels (channel_gather).
#include <algorithm>
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

// out[x * out_stride + 2 i] = a[x * in_stride + i] and out[... + 2 i + 1] =
// b[x * in_stride + i] for i < lanes / 2 (a last even lane from a) and x <
// count: the zip of two runs, as a shuffle of two channel groups
// (ShuffleNet-v2's) lays out each pixel's lanes.
TF_VECTOR_CLONES void ZipRuns(const float* __restrict a, const float* __restrict b,
                              int64_t in_stride, float* __restrict out, int64_t out_stride,
                              int64_t lanes, int64_t count) {
  const int64_t pairs = lanes / 2;
  for (int64_t x = 0; x < count; ++x) {
    const float* __restrict pa = a + x * in_stride;
    const float* __restrict pb = b + x * in_stride;
    float* __restrict po = out + x * out_stride;
    for (int64_t i = 0; i < pairs; ++i) {
      po[2 * i] = pa[i];
      po[2 * i + 1] = pb[i];
    }
    if (lanes % 2 != 0) po[lanes - 1] = pa[pairs];
  }
}

// Channel blocks up to this wide are gathered pixel by pixel (CopyChannels).
constexpr int64_t kMaxGatherLanes = 64;

// dst's channel c (laid out as dst_layout, dims its shape) = src's channel
// map[c] (src_layout; map null: c itself). Each task takes consecutive
// destination rows (n, channel block, y), enough of them that scheduling
// it costs little against its copy (a row of 14 pixels per task spent more
// on that than on copying; a squeeze-excite's 1x1 planes of one float each
// far more); how a channel block's channels fall in the source is worked
// out once per block a task reaches, and each pixel's lanes are copied as
// runs of channels contiguous on both sides.
void CopyChannels(const PlanBuffer& src_layout, const float* src, const PlanBuffer& dst_layout,
                  float* dst, const int64_t* map, const TfRuntime* rt) {
  const int64_t n = dst_layout.shape[0], c = dst_layout.shape[1], h = dst_layout.shape[2],
                w = dst_layout.shape[3];
  const int64_t src_c = src_layout.shape[1];
  const int64_t sb = src_layout.block, sw = src_layout.RowWidth();
  const int64_t db = dst_layout.block, dw = dst_layout.RowWidth();
  auto source = [&](int64_t ch) { return map == nullptr ? ch : map[ch]; };
  if (h * w == 1 && sw == 1 && dw == 1) {
    // 1x1 planes (a squeeze-excite's): in any channel block, an image is
    // its channels in order, one float each (this took 40 ns per float
    // through the rows below).
    for (int64_t image = 0; image < n; ++image) {
      for (int64_t ch = 0; ch < c; ++ch) dst[image * c + ch] = src[image * src_c + source(ch)];
    }
    return;
  }
  // Channel ch's source block and lane without a 64-bit division: those
  // cost more than a small plane's copy.
  const FastDivisor by_sb(sb);
  const int64_t blocks = c / db, src_blocks = src_c / sb;
  // Rows [y, y + count) of destination plane (image, channel block cb).
  auto copy_rows = [&](int64_t image, int64_t cb, int64_t first_y, int64_t count) {
    const int64_t plane = image * blocks + cb;
    auto in_at = [&](int64_t ch, int64_t y) {
      const int64_t block = by_sb.Quotient(ch);
      return src + (((image * src_blocks + block) * h + y) * sw) * sb + (ch - block * sb);
    };
    // The lanes from l on whose channels follow on in one source block.
    auto run_from = [&](int64_t l) {
      const int64_t ch = source(cb * db + l);
      int64_t run = 1;
      while (l + run < db && source(cb * db + l + run) == ch + run &&
             by_sb.Remainder(ch + run) != 0) {
        ++run;
      }
      return run;
    };
    const int64_t first = source(cb * db);
    bool one_run =
        by_sb.Remainder(first) + db <= sb;  // the block's channels follow on in one source block
    for (int64_t l = 1; l < db && one_run; ++l) one_run = source(cb * db + l) == first + l;
    // Otherwise the block's lanes as runs whose channels follow on in one
    // source block: (first lane, its channel, length).
    struct LaneRun {
      int64_t lane, channel, length;
    };
    // One run of `pixels` pixels from row y into the destination row `out`.
    auto copy_run = [&](const LaneRun& run, int64_t y, float* out, int64_t pixels) {
      const float* in = in_at(run.channel, y);
      if (run.length == 1) {  // a lane on its own (a shuffle's, NCHW's): one strided walk
        for (int64_t x = 0; x < pixels; ++x) out[x * db + run.lane] = in[x * sb];
      } else {
        CopyRuns(in, sb, out + run.lane, db, run.length, pixels);
      }
    };
    LaneRun runs[kMaxGatherLanes];
    int64_t run_count = 0;
    // Or the zip of two runs, each within one source block: lane l from
    // channel zip[l % 2] + l / 2.
    int64_t zip[2] = {-1, -1};
    if (!one_run && map != nullptr && db >= 4 && db <= kMaxGatherLanes) {
      zip[0] = source(cb * db);
      zip[1] = source(cb * db + 1);
      const int64_t lengths[2] = {(db + 1) / 2, db / 2};
      bool zipped = true;
      for (int g = 0; g < 2 && zipped; ++g) {
        zipped = by_sb.Remainder(zip[g]) + lengths[g] <= sb;
      }
      for (int64_t l = 2; l < db && zipped; ++l) zipped = source(cb * db + l) == zip[l % 2] + l / 2;
      if (!zipped) zip[0] = -1;
    }
    if (!one_run && map == nullptr && db <= kMaxGatherLanes) {
      for (int64_t l = 0; l < db;) {
        const int64_t run = run_from(l);
        runs[run_count++] = {l, source(cb * db + l), run};
        l += run;
      }
    }
    // Rows as wide as the image on both sides follow on in memory: the
    // rows of this call are then one run of count * w pixels, so the copy
    // is set up once, not once per row (a 14-pixel row cost about as much
    // to set up as to copy).
    const bool merged = sw == w && dw == w;
    const int64_t step = merged ? count : 1, pixels = merged ? count * w : w;
    for (int64_t y = first_y; y < first_y + count; y += step) {
      float* out = dst + (plane * h + y) * dw * db;
      if (one_run && sb == db) {  // only the rows' width changes
        std::memcpy(out, in_at(first, y), pixels * db * sizeof(float));
      } else if (one_run && db >= 4) {
        CopyRuns(in_at(first, y), sb, out, db, db, pixels);
      } else if (one_run) {  // a lane or few (NCHW's): one strided walk each
        for (int64_t l = 0; l < db; ++l) {
          const float* in = in_at(first + l, y);
          for (int64_t x = 0; x < pixels; ++x) out[x * db + l] = in[x * sb];
        }
      } else if (run_count > 0) {
        for (int64_t r = 0; r < run_count; ++r) copy_run(runs[r], y, out, pixels);
      } else if (zip[0] >= 0) {
        ZipRuns(in_at(zip[0], y), in_at(zip[1], y), sb, out, db, db, pixels);
      } else if (map != nullptr && db <= kMaxGatherLanes) {
        // Pixel by pixel, the lanes in order: the writes contiguous, the
        // reads from as many source blocks as the lanes' channels fall in.
        const float* lane[kMaxGatherLanes];
        for (int64_t l = 0; l < db; ++l) lane[l] = in_at(source(cb * db + l), y);
        for (int64_t x = 0; x < pixels; ++x) {
          for (int64_t l = 0; l < db; ++l) out[x * db + l] = lane[l][x * sb];
        }
      } else {
        for (int64_t l = 0; l < db;) {  // more lanes than `runs` holds: found row by row
          const LaneRun run{l, source(cb * db + l), run_from(l)};
          copy_run(run, y, out, pixels);
          l += run.length;
        }
      }
    }
  };
  const int64_t rows = n * blocks * h;
  // Rows per task: about 2048 floats, at least 16 tasks where there are rows for them.
  const int64_t rows_per_task =
      std::max<int64_t>(1, std::min(2048 / std::max<int64_t>(w * db, 1), rows / 16));
  ParallelFor(rt, (rows + rows_per_task - 1) / rows_per_task, n * c * h * w, [&](int64_t t) {
    const int64_t first = t * rows_per_task, end = std::min(rows, first + rows_per_task);
    const int64_t plane = first / h;
    int64_t image = plane / blocks, cb = plane % blocks, y = first % h;
    for (int64_t row = first; row < end;) {
      const int64_t count = std::min(end - row, h - y);
      copy_rows(image, cb, y, count);
      row += count;
      y = 0;
      if (++cb == blocks) {
        cb = 0;
        ++image;
      }
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

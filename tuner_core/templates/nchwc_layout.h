// Layout transforms between NCHW tensors and the channel-blocked NCHW[x]c
// layout that the x86 convolution templates compute in (AutoTVM's
// conv2d_NCHWc): a tensor [N, C, H, W] becomes [N, C/x, H, W, x], so the x
// channels of one pixel are contiguous and fill a vector register.
//
// Each function returns one statement that reads buffer `src` and writes
// buffer `dst` (flat fp32 buffers, as everywhere in the IR), with a parallel
// outer loop. `tag` keeps loop variable names unique when one kernel uses a
// transform twice.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_NCHWC_LAYOUT_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_NCHWC_LAYOUT_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tuner_core/ir/ir.h"
#include "tuner_core/templates/template.h"
#include "tuner_core/workloads/conv_args.h"

namespace tunefleet {

// Shape of an activation tensor and its channel block.
struct ActivationShape {
  int64_t n, c, h, w;
  int64_t block;  // channels per block; divides c
};

// NCHW src -> NCHW[block]c dst of the same height and width.
ir::Stmt NchwToBlocked(const std::string& tag, const std::string& src, const std::string& dst,
                       const ActivationShape& shape);

// The passes below read `src` blocked by `src_block` channels (a divisor of
// shape.c; 1 is NCHW) and write dst blocked by shape.block: a pass that
// copies its input anyway changes its channel block at no extra cost.

// Where an activation sits inside a zero-padded blocked buffer.
struct Padding {
  int64_t top = 0, left = 0;
  int64_t padded_h = 0, padded_w = 0;  // >= top + h and left + w
};

// src -> dst, blocked and zero-padded to padded_h x padded_w with the image
// at (top, left).
ir::Stmt PadToBlocked(const std::string& tag, const std::string& src, int64_t src_block,
                      const std::string& dst, const ActivationShape& shape, const Padding& padding);

// src of `shape` -> dst, blocked, out_h x out_w: the pixel at every
// stride_h-th row and stride_w-th column (what a strided pointwise
// convolution reads).
ir::Stmt SubsampleToBlocked(const std::string& tag, const std::string& src, int64_t src_block,
                            const std::string& dst, const ActivationShape& shape, int64_t stride_h,
                            int64_t stride_w, int64_t out_h, int64_t out_w);

// NCHW[block]c src -> NCHW dst of shape.
ir::Stmt BlockedToNchw(const std::string& tag, const std::string& src, const std::string& dst,
                       const ActivationShape& shape);

// The padding a blocked convolution reads: the workload's, widened so that
// every tap of every output column stays inside the buffer.
Padding ConvInputPadding(const ConvArgs& conv);

// Whether `a` is a pointwise convolution: 1x1, no padding (any stride).
bool PointwiseConv(const ConvArgs& a);

// The shape a blocked convolution template tiles for `a`: `a` itself, or
// for a pointwise convolution (1x1, no padding), whose channel blocks hold
// each image's pixels as one contiguous run, the image joined into one row
// of out_h * out_w columns (h = out_h = 1), as oneDNN's 1x1 kernels do. A
// strided one reads the pixels a pass gathered first (every stride-th row
// and column, BlockedConvPlan::subsample_h/_w), at stride 1: its rows are
// no longer every other line of the input apart, and it is joined alike.
// Joined, a 7x7 image is then cut into tiles of any width up to 7 (49
// columns by at most 6: four of 6 and five of 5) instead of rows of 7 or 4 + 3; the
// "tile_ow" knob's values stay those of the image's rows
// (DefineRowTileKnob), at most 7 there. The compute and what sizes its
// tiles (the knob's same-kernel values, the register demand, the compiler's
// default config) read this shape; the layout transforms keep `a`'s.
ConvArgs TiledConvShape(const ConvArgs& a);

// Accumulators a blocked convolution's register tile may have (AVX-512 has
// 32 registers; whether the weights and the broadcast input fit beside a
// tile is the target's count, tuner_core/templates/register_fit.h).
inline constexpr int64_t kMaxTileVectors = 28;

// How a blocked convolution tiles each output row: `tiles` tiles of `width`
// output columns, then `narrow` tiles one column narrower, by one channel
// block held in vectors of `vec` lanes. A row the "tile_ow" knob does not
// divide is cut into as few tiles as the knob allows, as even as they can be
// (56 columns by at most 5: eight of 5 and four of 4; 7 by at most 6: one of
// 4 and one of 3), so no tile computes past the end of the row and none is
// left so narrow that its few accumulators wait on the FMA latency.
struct RowTiling {
  int64_t width = 1;   // columns of the first tiles (at most the "tile_ow" knob)
  int64_t vec = 1;     // lanes: gcd of the "vec" knob and the channel block
  int64_t tiles = 1;   // tiles of `width` columns, first in the row
  int64_t narrow = 0;  // tiles of width - 1 columns after them
};

// The columns of the widest tile of a row `out_w` wide cut into tiles of at
// most `max_width` (RowTiling's `width`).
int64_t RowTileWidth(int64_t out_w, int64_t max_width);

// The columns of the widest tile the "tile_ow" knob's value `tile_ow` cuts a
// blocked convolution's tiled row into (RowTileWidth of TiledConvShape(a)'s
// row): what its register demand, its same-kernel values and the
// compiler's default config count.
int64_t ConvTileWidth(const ConvArgs& a, int64_t tile_ow);

// The register tile of a row tile of `width` output columns by `block`
// channels with the "vec" knob `vec`: vectors of min(vec, block) lanes (the
// last one narrower where they do not divide the block: VectorLoops),
// width x ceil(block / lanes) accumulators, and the ceil(block / lanes)
// weight vectors one step reads, each reused by every column. What else a step reads (a
// broadcast input, an input vector) each template adds.
RegisterDemand RowTileDemand(int64_t width, int64_t block, int64_t vec);
// RowTileDemand of a convolution config's knobs "tile_oc", "tile_ow" and
// "vec", its widest tile at most `max_width` columns.
[[nodiscard]] absl::StatusOr<RegisterDemand> ConvRowTileDemand(
    const ConvArgs& a, const Config& config,
    int64_t max_width = std::numeric_limits<int64_t>::max());

// The tiles of one output row under `tiling`: a serial loop `var` over the
// full tiles, then one (`var` + "n") over the narrow ones. tile(col0, width,
// tag) builds the tile whose first output column is col0; `tag` ("" for the
// full tiles, "n" for the narrow) keeps the loop names of the two apart.
ir::Stmt RowTileLoop(const RowTiling& tiling, const std::string& var,
                     const std::function<ir::Stmt(ir::Expr, int64_t, const std::string&)>& tile);

// How many parts the tiles of each row are split into so that a parallel
// loop over `rows` rows (of every batch and channel block) has at least
// `min_units` work items: 1 when it has them already, else the fewest parts
// of equal size that reach it (one tile each where the row has too few
// tiles). Every part but the last has tiles_per_part tiles.
struct RowParts {
  int64_t parts = 1;
  int64_t tiles_per_part = 1;
};
RowParts SplitRows(const RowTiling& tiling, int64_t rows, int64_t min_units);

// The tiles of part `part` of one output row (RowTileLoop's, split by
// `split`): a serial loop `var` over the part's tiles, each full or narrow
// (its width fixed at compile time, its position not); with one part,
// RowTileLoop itself.
// The columns part `part` of a row covers (RowTilePartLoop's tiles): the
// first and how many, as expressions of `part` (the whole row for one part).
struct PartColumns {
  ir::Expr first, count;
};
PartColumns RowPartColumns(const RowTiling& tiling, const RowParts& split, ir::Expr part);

ir::Stmt RowTilePartLoop(
    const RowTiling& tiling, const RowParts& split, ir::Expr part, const std::string& var,
    const std::function<ir::Stmt(ir::Expr, int64_t, const std::string&)>& tile);

// The tiling of output rows `out_w` wide by tiles of at most `width` columns
// x `block` channels with the "vec" knob `vec`; InvalidArgument when the
// widest tile needs more than kMaxTileVectors vectors.
[[nodiscard]] absl::StatusOr<RowTiling> TileOutputRows(int64_t out_w, int64_t width, int64_t block,
                                                       int64_t vec);

// Values of the "tile_ow" knob: those of `widths` up to out_w, plus out_w
// itself (when not among them) if it is at most `max_whole_row`.
std::vector<int64_t> TileWidthCandidates(int64_t out_w, absl::Span<const int64_t> widths,
                                         int64_t max_whole_row);

// Defines the "tile_ow" knob of `space` for convolution `a` with
// TileWidthCandidates(a.out_w, widths, max_whole_row), and declares the
// values that cut the tiled row (TiledConvShape(a)) into the same tiles
// (RowTileWidth: on 14 columns, 5 and 6 both cut 5 + 5 + 4) one kernel
// (ConfigSpace::DeclareSameKernelChoices), so a search measures one. The
// candidates follow the image's rows even where the row is joined, so a
// space's configs (and the indices of older records) stay what they were.
[[nodiscard]] absl::Status DefineRowTileKnob(ConfigSpace* space, const ConvArgs& a,
                                             absl::Span<const int64_t> widths,
                                             int64_t max_whole_row);

// How a blocked convolution kernel is put together, by conv2d and depthwise
// alike: which stages are timed follows `layout_nchwc` (see
// conv2d_nchwc_x86.h).
struct BlockedConvPlan {
  ActivationShape in, out;  // out.w is the real output width
  Padding pad;
  int64_t kernel_elems = 0;  // packed weights
  bool layout_nchwc = false;
  // With layout_nchwc, the channel block the input arrives in (data_nchwc):
  // the workload's in_block where it gives one, else in.block, the block
  // `compute` reduces over. Where they differ, the pass that pads or
  // subsamples the input converts it; where none runs, `compute` reads it
  // in place if it can (compute_reads_blocks_within), else a pass copies
  // it into in.block first (what a relayout before the kernel would cost).
  int64_t data_block = 1;
  // Where > 0, `compute` reads its unpadded input in place in any block
  // (its `data_block` argument) that is a multiple of in.block and divides
  // this: a convolution group's channels (a block holding several groups'
  // would be read once for each of them).
  int64_t compute_reads_blocks_within = 0;
  // Writes the packed weights into `kernel_vec` from the "kernel" argument.
  std::function<ir::Stmt(const std::string& kernel_vec)> pack_kernel;
  // A strided pointwise convolution (TiledConvShape): a pass gathers every
  // subsample_h-th row and subsample_w-th column of the blocked input
  // (out.h x out.w) and `compute` reads that at stride 1. Set by
  // BlockedConvGeometry.
  int64_t subsample_h = 1, subsample_w = 1;
  // When set, `compute` handles the borders itself and reads the blocked
  // input unpadded (in.h x in.w): no padding pass runs.
  bool compute_reads_unpadded = false;
  // Reads `data` blocked by `data_block` channels (in.block unless
  // compute_reads_blocks_within; padded to pad.padded_h x pad.padded_w unless
  // compute_reads_unpadded) and `kernel_vec`, writes blocked `out`.
  std::function<ir::Stmt(const std::string& data, int64_t data_block, const std::string& kernel_vec,
                         const std::string& out)>
      compute;
};

// Whether the kernel of `plan` copies its input before `compute` reads it
// (a padding or subsampling pass, or a change of channel block `compute`
// cannot read in place) when the input arrives blocked by `data_block`;
// InvalidArgument for a block that does not divide the input's channels.
[[nodiscard]] absl::StatusOr<bool> BlockedConvCopiesInput(const BlockedConvPlan& plan,
                                                          int64_t data_block);

// A plan's geometry for convolution `a` (a.k output channels: C for
// depthwise), its input blocked by `in_block` channels and its output by
// `out_block`: the shapes, the input's padding (ConvInputPadding), the
// layout and the block the input arrives in (a.in_block, else in_block). The caller adds
// kernel_elems, pack_kernel and compute (and compute_reads_unpadded).
BlockedConvPlan BlockedConvGeometry(const ConvArgs& a, int64_t in_block, int64_t out_block);

// The kernel of `tmpl` for `workload` (whose tensors are "data", "kernel"
// and "output"): body and, for NCHWc, staged/prepare/finish from the plan.
ir::LoweredFunc AssembleBlockedConv(const BlockedConvPlan& plan, const Template& tmpl,
                                    const Workload& workload);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_NCHWC_LAYOUT_H_

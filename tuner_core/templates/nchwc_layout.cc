#include "tuner_core/templates/nchwc_layout.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/templates/loop_builder.h"

namespace tunefleet {

using namespace ir;  // NOLINT

namespace {

// Splits the parallel index of an (n, cb, row) loop. A pass walking a
// source by its blocks (ForEachRowFrom) also sets the source's block and
// the first lane of cb's channels in it.
struct RowIndex {
  Expr n, cb, row;
  Expr src_cb, src_lane;
};

// The parallel loop "<tag>_t" over (n, channel block, row) of `s` with
// `rows` rows per block; `row_body` builds the statement for one row.
Stmt ForEachBlockedRow(const std::string& tag, const ActivationShape& s, int64_t rows,
                       const std::function<Stmt(const RowIndex& r)>& row_body) {
  const int64_t blocks = s.c / s.block;
  const std::string t_name = tag + "_t";
  Expr t = Var::Make(t_name);
  const RowIndex r = {t / (blocks * rows), (t / rows) % blocks, t % rows};
  return For::Make(t_name, 0, s.n * blocks * rows, ForKind::kParallel, row_body(r));
}

// The rows of `s` (n, channel block, row) that a pass from a source
// blocked by `src_block` channels writes, in parallel. Where a source
// block holds q > 1 of s's, by the source's blocks, each of its rows
// writing its q rows of s in turn while it is in cache: walked by s's
// blocks, each source row would come from memory q times (a 48-channel
// block read for eight 8-channel ones).
Stmt ForEachRowFrom(const std::string& tag, const ActivationShape& s, int64_t src_block,
                    int64_t rows, const std::function<Stmt(const RowIndex& r)>& row_body) {
  if (src_block <= s.block || src_block % s.block != 0) {
    return ForEachBlockedRow(tag, s, rows, row_body);
  }
  const int64_t q = src_block / s.block;
  const ActivationShape by_source = {s.n, s.c, s.h, s.w, src_block};
  return ForEachBlockedRow(tag, by_source, rows, [&](const RowIndex& src) {
    return Loop(tag + "_q", q, ForKind::kSerial, [&](Expr j) {
      return row_body({src.n, src.cb * q + j, src.row, src.cb, j * s.block});
    });
  });
}

// Where (row r's image and channel block, input row h, column w, lane b)
// lies in `s` blocked by `src_block` channels (1: NCHW) rather than s.block.
Expr SourceIndex(const ActivationShape& s, int64_t src_block, const RowIndex& r, Expr h, Expr w,
                 Expr b) {
  if (src_block == 1) return ((r.n * s.c + r.cb * s.block + b) * s.h + h) * s.w + w;
  Expr src_cb, lane;         // the channel's block and lane in src
  if (r.src_cb.defined()) {  // whole blocks of dst in one of src (ForEachRowFrom)
    src_cb = r.src_cb;
    lane = r.src_lane + b;
  } else if (src_block == s.block) {
    src_cb = r.cb;
    lane = b;
  } else if (s.block % src_block == 0) {  // whole blocks of src in one of dst
    src_cb = r.cb * (s.block / src_block) + b / src_block;
    lane = b % src_block;
  } else {
    Expr c = r.cb * s.block + b;
    src_cb = c / src_block;
    lane = c % src_block;
  }
  return (((r.n * (s.c / src_block) + src_cb) * s.h + h) * s.w + w) * src_block + lane;
}

}  // namespace

Stmt NchwToBlocked(const std::string& tag, const std::string& src, const std::string& dst,
                   const ActivationShape& s) {
  const int64_t CB = s.c / s.block;
  return ForEachBlockedRow(tag, s, s.h, [&](const RowIndex& r) {
    return Loop(tag + "_w", s.w, ForKind::kSerial, [&](Expr w) {
      return Loop(tag + "_b", s.block, ForKind::kSerial, [&](Expr b) {
        Expr c = r.cb * s.block + b;
        return Store::Make(dst, Load::Make(src, ((r.n * s.c + c) * s.h + r.row) * s.w + w),
                           (((r.n * CB + r.cb) * s.h + r.row) * s.w + w) * s.block + b);
      });
    });
  });
}

Stmt PadToBlocked(const std::string& tag, const std::string& src, int64_t src_block,
                  const std::string& dst, const ActivationShape& s, const Padding& p) {
  const int64_t CB = s.c / s.block;
  return ForEachRowFrom(tag, s, src_block, p.padded_h, [&](const RowIndex& r) {
    auto dst_index = [&](Expr wp, Expr b) {
      return (((r.n * CB + r.cb) * p.padded_h + r.row) * p.padded_w + wp) * s.block + b;
    };
    auto zeros = [&](const std::string& suffix, int64_t begin, int64_t end) {
      return Loop(tag + "_zw" + suffix, end - begin, ForKind::kSerial, [&](Expr wp) {
        return Loop(tag + "_zb" + suffix, s.block, ForKind::kSerial,
                    [&](Expr b) { return Store::Make(dst, 0.0, dst_index(wp + begin, b)); });
      });
    };
    Expr h = r.row - p.top;
    Stmt copy = Loop(tag + "_w", s.w, ForKind::kSerial, [&](Expr w) {
      return Loop(tag + "_b", s.block, ForKind::kSerial, [&](Expr b) {
        return Store::Make(dst, Load::Make(src, SourceIndex(s, src_block, r, h, w, b)),
                           dst_index(w + p.left, b));
      });
    });
    Stmt image_row =
        Block::Make({zeros("l", 0, p.left), copy, zeros("r", p.left + s.w, p.padded_w)});
    Stmt row = image_row;
    if (p.top > 0 || p.padded_h > p.top + s.h) {
      row = IfThenElse::Make(r.row >= p.top && r.row < p.top + s.h, image_row,
                             zeros("a", 0, p.padded_w));
    }
    return row;
  });
}

Stmt SubsampleToBlocked(const std::string& tag, const std::string& src, int64_t src_block,
                        const std::string& dst, const ActivationShape& s, int64_t stride_h,
                        int64_t stride_w, int64_t out_h, int64_t out_w) {
  const int64_t CB = s.c / s.block;
  return ForEachRowFrom(tag, s, src_block, out_h, [&](const RowIndex& r) {
    return Loop(tag + "_w", out_w, ForKind::kSerial, [&](Expr w) {
      return Loop(tag + "_b", s.block, ForKind::kSerial, [&](Expr b) {
        Expr src_index = SourceIndex(s, src_block, r, r.row * stride_h, w * stride_w, b);
        return Store::Make(dst, Load::Make(src, src_index),
                           (((r.n * CB + r.cb) * out_h + r.row) * out_w + w) * s.block + b);
      });
    });
  });
}

Stmt BlockedToNchw(const std::string& tag, const std::string& src, const std::string& dst,
                   const ActivationShape& s) {
  const int64_t CB = s.c / s.block;
  return ForEachBlockedRow(tag, s, s.h, [&](const RowIndex& r) {
    return Loop(tag + "_b", s.block, ForKind::kSerial, [&](Expr b) {
      return Loop(tag + "_w", s.w, ForKind::kSerial, [&](Expr w) {
        return Store::Make(
            dst, Load::Make(src, (((r.n * CB + r.cb) * s.h + r.row) * s.w + w) * s.block + b),
            ((r.n * s.c + r.cb * s.block + b) * s.h + r.row) * s.w + w);
      });
    });
  });
}

Padding ConvInputPadding(const ConvArgs& a) {
  Padding p;
  p.top = a.pad_top;
  p.left = a.pad_left;
  p.padded_h = std::max(a.h + a.pad_top + a.pad_bottom,
                        (a.out_h - 1) * a.stride_h + (a.r - 1) * a.dil_h + 1);
  p.padded_w = std::max(a.w + a.pad_left + a.pad_right,
                        (a.out_w - 1) * a.stride_w + (a.s - 1) * a.dil_w + 1);
  return p;
}

bool PointwiseConv(const ConvArgs& a) { return a.r == 1 && a.s == 1 && !a.padded(); }

namespace {

bool Strided(const ConvArgs& a) { return a.stride_h > 1 || a.stride_w > 1; }

}  // namespace

ConvArgs TiledConvShape(const ConvArgs& a) {
  if (!PointwiseConv(a) || (a.h == 1 && !Strided(a))) return a;
  ConvArgs joined = a;
  joined.w = a.out_h * a.out_w;  // a strided one's input as its pass gathers it
  joined.h = 1;
  joined.stride_h = joined.stride_w = 1;
  joined.out_w = a.out_h * a.out_w;
  joined.out_h = 1;
  return joined;
}

RegisterDemand RowTileDemand(int64_t width, int64_t block, int64_t vec) {
  RegisterDemand demand;
  demand.lanes = std::min(vec, block);
  demand.accumulators = width * CeilDiv(block, demand.lanes);
  demand.vector_operands = CeilDiv(block, demand.lanes);
  return demand;
}

[[nodiscard]] absl::StatusOr<RegisterDemand> ConvRowTileDemand(const ConvArgs& a,
                                                               const Config& config,
                                                               int64_t max_width) {
  TF_ASSIGN_OR_RETURN(const int64_t tile_oc, config.GetInt("tile_oc"));
  TF_ASSIGN_OR_RETURN(const int64_t tile_ow, config.GetInt("tile_ow"));
  TF_ASSIGN_OR_RETURN(const int64_t vec, config.GetInt("vec"));
  return RowTileDemand(std::min(ConvTileWidth(a, tile_ow), max_width), tile_oc, vec);
}

int64_t RowTileWidth(int64_t out_w, int64_t max_width) {
  return CeilDiv(out_w, CeilDiv(out_w, max_width));
}

int64_t ConvTileWidth(const ConvArgs& a, int64_t tile_ow) {
  return RowTileWidth(TiledConvShape(a).out_w, tile_ow);
}

[[nodiscard]] absl::StatusOr<RowTiling> TileOutputRows(int64_t out_w, int64_t width, int64_t block,
                                                       int64_t vec) {
  RowTiling tiling;
  // As few tiles as `width` allows, as even as they can be.
  const int64_t count = CeilDiv(out_w, width);
  tiling.width = RowTileWidth(out_w, width);
  const RegisterDemand tile = RowTileDemand(tiling.width, block, vec);
  tiling.vec = tile.lanes;
  tiling.narrow = count * tiling.width - out_w;  // < count
  tiling.tiles = count - tiling.narrow;
  const int64_t tile_vectors = tile.accumulators;
  if (tile_vectors > kMaxTileVectors) {
    return absl::InvalidArgumentError(
        absl::StrCat("register tile ", tiling.width, "x", block, " (tile_ow ", width,
                     " on a row of ", out_w, ")", " needs ", tile_vectors, " vectors of ",
                     tiling.vec, " lanes (at most ", kMaxTileVectors, ")"));
  }
  return tiling;
}

Stmt RowTileLoop(const RowTiling& tiling, const std::string& var,
                 const std::function<Stmt(Expr, int64_t, const std::string&)>& tile) {
  Stmt full = Loop(var, tiling.tiles, ForKind::kSerial,
                   [&](Expr c) { return tile(c * tiling.width, tiling.width, ""); });
  if (tiling.narrow == 0) return full;
  const int64_t start = tiling.tiles * tiling.width, width = tiling.width - 1;
  Stmt narrow = Loop(var + "n", tiling.narrow, ForKind::kSerial,
                     [&](Expr c) { return tile(c * width + start, width, "n"); });
  return Block::Make({full, narrow});
}

RowParts SplitRows(const RowTiling& tiling, int64_t rows, int64_t min_units) {
  RowParts split;
  const int64_t tiles = tiling.tiles + tiling.narrow;
  split.tiles_per_part = tiles;
  if (rows >= min_units) return split;
  // At least the parts asked for (where the tiles allow): rounding the part
  // size down, never up.
  split.tiles_per_part = std::max<int64_t>(1, tiles / CeilDiv(min_units, rows));
  split.parts = CeilDiv(tiles, split.tiles_per_part);
  return split;
}

Stmt RowTilePartLoop(const RowTiling& tiling, const RowParts& split, Expr part,
                     const std::string& var,
                     const std::function<Stmt(Expr, int64_t, const std::string&)>& tile) {
  if (split.parts == 1) return RowTileLoop(tiling, var, tile);
  const int64_t tiles = tiling.tiles + tiling.narrow;
  return Loop(var, split.tiles_per_part, ForKind::kSerial, [&](Expr j) {
    Expr g = part * split.tiles_per_part + j;
    Stmt body = tile(g * tiling.width, tiling.width, "");
    if (tiling.narrow > 0) {
      // Tile g >= tiling.tiles is narrow; it starts at tiling.tiles * width +
      // (g - tiling.tiles) * (width - 1).
      Stmt narrow = tile(g * (tiling.width - 1) + tiling.tiles, tiling.width - 1, "n");
      body = IfThenElse::Make(g < tiling.tiles, body, narrow);
    }
    if (tiles % split.tiles_per_part != 0) body = IfThenElse::Make(g < tiles, body);
    return body;
  });
}

PartColumns RowPartColumns(const RowTiling& tiling, const RowParts& split, Expr part) {
  const int64_t tiles = tiling.tiles + tiling.narrow;
  // Tile g starts at g * width, or past the full tiles at g * (width - 1) +
  // tiles: g * width less the narrow tiles before it.
  auto start = [&](Expr g) {
    return tiling.narrow == 0 ? g * tiling.width : g * tiling.width - Max(g - tiling.tiles, 0);
  };
  if (split.parts == 1) return {Expr(0), start(Expr(tiles))};
  Expr g0 = Min(part * split.tiles_per_part, Expr(tiles));
  Expr g1 = Min(part * split.tiles_per_part + split.tiles_per_part, Expr(tiles));
  Expr first = start(g0);
  return {first, start(g1) - first};
}

std::vector<int64_t> TileWidthCandidates(int64_t out_w, absl::Span<const int64_t> widths,
                                         int64_t max_whole_row) {
  std::vector<int64_t> out;
  for (int64_t v : widths) {
    if (v <= out_w) out.push_back(v);
  }
  if (out_w <= max_whole_row && std::find(out.begin(), out.end(), out_w) == out.end()) {
    out.push_back(out_w);
  }
  return out;
}

[[nodiscard]] absl::Status DefineRowTileKnob(ConfigSpace* space, const ConvArgs& a,
                                             absl::Span<const int64_t> widths,
                                             int64_t max_whole_row) {
  const std::vector<int64_t> values = TileWidthCandidates(a.out_w, widths, max_whole_row);
  TF_RETURN_IF_ERROR(space->DefineKnob("tile_ow", values));
  std::vector<int64_t> tiles;
  for (int64_t v : values) tiles.push_back(ConvTileWidth(a, v));
  return space->DeclareSameKernelChoices("tile_ow", tiles);
}

BlockedConvPlan BlockedConvGeometry(const ConvArgs& a, int64_t in_block, int64_t out_block) {
  BlockedConvPlan plan;
  plan.in = {a.n, a.c, a.h, a.w, in_block};
  plan.out = {a.n, a.k, a.out_h, a.out_w, out_block};
  plan.pad = ConvInputPadding(a);
  plan.layout_nchwc = a.layout_nchwc;
  plan.data_block = a.in_block > 0 ? a.in_block : in_block;
  if (PointwiseConv(a) && Strided(a)) {  // TiledConvShape reads it gathered
    plan.subsample_h = a.stride_h;
    plan.subsample_w = a.stride_w;
  }
  return plan;
}

namespace {

bool Subsampled(const BlockedConvPlan& plan) {
  return plan.subsample_h > 1 || plan.subsample_w > 1;
}

bool NeedsPadding(const BlockedConvPlan& plan) {
  return !Subsampled(plan) && !plan.compute_reads_unpadded &&
         (plan.pad.top > 0 || plan.pad.left > 0 || plan.pad.padded_h > plan.in.h ||
          plan.pad.padded_w > plan.in.w);
}

// Whether `compute` reads an unpadded input blocked by `data_block` in place.
bool ReadsInPlace(const BlockedConvPlan& plan, int64_t data_block) {
  return data_block == plan.in.block ||
         (plan.compute_reads_blocks_within > 0 && data_block % plan.in.block == 0 &&
          plan.compute_reads_blocks_within % data_block == 0);
}

}  // namespace

[[nodiscard]] absl::StatusOr<bool> BlockedConvCopiesInput(const BlockedConvPlan& plan,
                                                          int64_t data_block) {
  if (data_block < 1 || plan.in.c % data_block != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("channel block ", data_block, " does not divide C=", plan.in.c));
  }
  return Subsampled(plan) || NeedsPadding(plan) || !ReadsInPlace(plan, data_block);
}

LoweredFunc AssembleBlockedConv(const BlockedConvPlan& plan, const Template& tmpl,
                                const Workload& workload) {
  LoweredFunc result = KernelFunc(tmpl, workload, Stmt());
  LoweredFunc* func = &result;
  const ActivationShape& in = plan.in;
  const bool subsampled = Subsampled(plan);
  const bool needs_padding = NeedsPadding(plan);
  const int64_t data_pad_elems = subsampled ? in.n * in.c * plan.out.h * plan.out.w
                                            : in.n * in.c * plan.pad.padded_h * plan.pad.padded_w;
  const int64_t out_elems = plan.out.n * plan.out.c * plan.out.h * plan.out.w;
  // The input as the compute reads it, from `src` (blocked by src_block;
  // 1: NCHW) into "data_pad": every subsample-th pixel, or padded.
  auto gather = [&](const std::string& src, int64_t src_block) {
    if (subsampled) {
      return SubsampleToBlocked("sub", src, src_block, "data_pad", in, plan.subsample_h,
                                plan.subsample_w, plan.out.h, plan.out.w);
    }
    return PadToBlocked("pad", src, src_block, "data_pad", in, plan.pad);
  };
  if (plan.layout_nchwc) {
    const ActivationShape arrives = {in.n, in.c, in.h, in.w, plan.data_block};
    func->staged = {{"data_nchwc", in.n * in.c * in.h * in.w},
                    {"kernel_vec", plan.kernel_elems},
                    {"out_nchwc", out_elems}};
    func->prepare = Block::Make(
        {NchwToBlocked("pd", "data", "data_nchwc", arrives), plan.pack_kernel("kernel_vec")});
    if (needs_padding || subsampled) {
      func->body = Allocate::Make(
          "data_pad", data_pad_elems, MemoryScope::kGlobal,
          Block::Make({gather("data_nchwc", plan.data_block),
                       plan.compute("data_pad", in.block, "kernel_vec", "out_nchwc")}));
    } else if (!ReadsInPlace(plan, plan.data_block)) {
      // Into the compute's block, unpadded: a relayout inside the kernel.
      const Padding none = {0, 0, in.h, in.w};
      func->body = Allocate::Make(
          "data_pad", in.n * in.c * in.h * in.w, MemoryScope::kGlobal,
          Block::Make({PadToBlocked("blk", "data_nchwc", plan.data_block, "data_pad", in, none),
                       plan.compute("data_pad", in.block, "kernel_vec", "out_nchwc")}));
    } else {
      func->body = plan.compute("data_nchwc", plan.data_block, "kernel_vec", "out_nchwc");
    }
    func->finish = BlockedToNchw("uo", "out_nchwc", "output", plan.out);
    return result;
  }
  const bool unpadded = plan.compute_reads_unpadded && !subsampled;
  Stmt to_blocked = unpadded ? NchwToBlocked("blk", "data", "data_pad", in) : gather("data", 1);
  Stmt body = Block::Make({plan.pack_kernel("kernel_vec"), to_blocked,
                           plan.compute("data_pad", in.block, "kernel_vec", "out_vec"),
                           BlockedToNchw("uo", "out_vec", "output", plan.out)});
  body = Allocate::Make("out_vec", out_elems, MemoryScope::kGlobal, body);
  body = Allocate::Make("data_pad", unpadded ? in.n * in.c * in.h * in.w : data_pad_elems,
                        MemoryScope::kGlobal, body);
  func->body = Allocate::Make("kernel_vec", plan.kernel_elems, MemoryScope::kGlobal, body);
  return result;
}

}  // namespace tunefleet

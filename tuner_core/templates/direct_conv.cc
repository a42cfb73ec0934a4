#include "tuner_core/templates/direct_conv.h"

#include <algorithm>
#include <functional>

#include "tuner_core/ir/final_store.h"
#include "tuner_core/templates/loop_builder.h"

namespace tunefleet {

using namespace ir;  // NOLINT

BlockedConvPlan DirectConvPlan(const ConvArgs& conv, DirectConvParams* p,
                               int64_t reads_blocks_within) {
  p->pad = ConvInputPadding(*p);
  BlockedConvPlan plan = BlockedConvGeometry(conv, p->ic_bn, p->oc_bn);
  plan.compute_reads_unpadded = p->inline_pad;
  plan.compute_reads_blocks_within = reads_blocks_within;
  plan.kernel_elems = p->k * (p->c / p->group) * p->r * p->s;
  return plan;
}

int64_t ReduceLanes(const DirectConvParams& p) {
  return p.lane_groups > 1 ? p.c / p.group : p.ic_bn;
}

namespace {

// Parallel work items a kernel offers at least (when it has the rows and
// tiles): enough for the cores of a typical measuring host to share evenly.
constexpr int64_t kMinParallelUnits = 16;

// Rows per band of an icc_outer kernel over `rows` output rows and `units`
// (batch, output-channel block) pairs: bands only where the pairs are fewer
// than kMinParallelUnits.
int64_t RowsPerBand(int64_t rows, int64_t units) {
  return CeilDiv(rows, std::min(rows, CeilDiv(kMinParallelUnits, units)));
}

// The input-channel block of the data that block `icc` of output-channel
// block `occ`'s reduction reads: its group's first plus icc, or with lane
// groups the block of the same groups' input channels.
Expr DataBlock(const DirectConvParams& p, Expr occ, Expr icc) {
  if (p.lane_groups > 1) return occ;
  if (p.group == 1) return icc;
  return (occ / p.OCC_group) * p.ICC + icc;
}

}  // namespace

// kernel [K][C/group][R][S] -> kernel_vec [K/oc_bn][ICC][R][S][lanes][oc_bn],
// lanes = ReduceLanes(p).
Stmt DirectConvPackKernel(const DirectConvParams& p, const std::string& dst) {
  const int64_t group_c = p.c / p.group, lanes = ReduceLanes(p);
  Expr t = Var::Make("pk_t");
  Expr occ = t / p.ICC, icc = t % p.ICC;
  Stmt body = Loop("pk_r", p.r, ForKind::kSerial, [&](Expr r) {
    return Loop("pk_s", p.s, ForKind::kSerial, [&](Expr s) {
      return Loop("pk_i", lanes, ForKind::kSerial, [&](Expr i) {
        return Loop("pk_o", p.oc_bn, ForKind::kSerial, [&](Expr o) {
          Expr src = (((occ * p.oc_bn + o) * group_c + icc * lanes + i) * p.r + r) * p.s + s;
          Expr dst_index =
              (((((occ * p.ICC + icc) * p.r + r) * p.s + s) * lanes + i) * p.oc_bn) + o;
          return Store::Make(dst, Load::Make("kernel", src), dst_index);
        });
      });
    });
  });
  return For::Make("pk_t", 0, p.OCC * p.ICC, ForKind::kParallel, body);
}

namespace {

// One FMA step of a register tile: input channel (icc, icb), tap (kh, kw).
using StepFn = std::function<Stmt(Expr, Expr, Expr, Expr)>;

// What a border tile (one some tap of which reads the zero padding) knows
// of its taps: whether tap row kh lies inside the image, whether tap column
// kw does for every column of the tile and whether for at least one (true
// may also stand for "perhaps": the partial step checks each column), and
// the step that checks each column.
struct BorderTaps {
  std::function<Expr(Expr)> row_inside;
  std::function<Expr(Expr)> columns_inside;
  std::function<Expr(Expr)> some_column_inside;
  StepFn partial;
};

// The reduction of one register tile in loop order `reduce`; `step` builds
// the FMAs for input channel (icc, icb) and tap (kh, kw). `tag` keeps loop
// names unique when a kernel holds two copies (interior and border). With
// `border`, each tap's loops run only where the tap reads inside the image
// at all, with `step` where every column of the tile does and
// border->partial where only some do: the test is made once per tap and
// input-channel block (per tap in "kh_kw_c_ic"; in "c_kh_ic_kw", whose
// inner loop is the tap's column, the row's per block and the column's per
// input channel), not for each column of the tile, so the taps of an
// atrous convolution that read the padding for most rows (DeepLabV3's
// rates 12 and 24 on a 28x28 map) cost a branch, not a reduction.
Stmt Reduction(const DirectConvParams& p, const std::string& reduce, const std::string& tag,
               const StepFn& step, const BorderTaps* border = nullptr) {
  auto loop = [&](const std::string& name, int64_t extent, ForKind kind,
                  const std::function<Stmt(Expr)>& body) {
    return Loop(name + tag, extent, kind, body);
  };
  // The loops under tap (kh, kw), `loops(step, name suffix)`, guarded.
  auto tap = [&](Expr kh, Expr kw,
                 const std::function<Stmt(const StepFn&, const std::string&)>& loops) {
    if (border == nullptr) return loops(step, "");
    Expr row = border->row_inside(kh);
    return IfThenElse::Make(
        row && border->columns_inside(kw), loops(step, ""),
        IfThenElse::Make(row && border->some_column_inside(kw), loops(border->partial, "_p")));
  };
  // With one kernel column c_kh_ic_kw is c_kh_kw_ic (declared one kernel).
  if (reduce == "c_kh_kw_ic" || (reduce == "c_kh_ic_kw" && p.s == 1)) {
    return loop("icc", p.ICC, ForKind::kSerial, [&](Expr icc) {
      return loop("kh", p.r, ForKind::kSerial, [&](Expr kh) {
        return loop("kw", p.s, ForKind::kSerial, [&](Expr kw) {
          return tap(kh, kw, [&](const StepFn& f, const std::string& suffix) {
            return loop("icb" + suffix, ReduceLanes(p), ForKind::kSerial,
                        [&](Expr icb) { return f(icc, icb, kh, kw); });
          });
        });
      });
    });
  }
  if (reduce == "c_kh_ic_kw") {
    // kw is the inner (unrolled) loop: the row's test guards the input
    // channels, the columns' each tap.
    return loop("icc", p.ICC, ForKind::kSerial, [&](Expr icc) {
      return loop("kh", p.r, ForKind::kSerial, [&](Expr kh) {
        Stmt body = loop("icb", ReduceLanes(p), ForKind::kSerial, [&](Expr icb) {
          return loop("kw", p.s, ForKind::kUnrolled, [&](Expr kw) {
            if (border == nullptr) return step(icc, icb, kh, kw);
            return IfThenElse::Make(border->columns_inside(kw), step(icc, icb, kh, kw),
                                    border->partial(icc, icb, kh, kw));
          });
        });
        return border == nullptr ? body : IfThenElse::Make(border->row_inside(kh), body);
      });
    });
  }
  // kh_kw_c_ic
  return loop("kh", p.r, ForKind::kSerial, [&](Expr kh) {
    return loop("kw", p.s, ForKind::kSerial, [&](Expr kw) {
      return tap(kh, kw, [&](const StepFn& f, const std::string& suffix) {
        return loop("icc" + suffix, p.ICC, ForKind::kSerial, [&](Expr icc) {
          return loop("icb" + suffix, ReduceLanes(p), ForKind::kSerial,
                      [&](Expr icb) { return f(icc, icb, kh, kw); });
        });
      });
    });
  });
}

}  // namespace

// The convolution proper: `data` is blocked by `data_block` channels (a
// multiple of ic_bn: its values are broadcast one at a time, or with lane
// groups read a vector at a time, so any block holding whole reduction
// blocks reads alike; a divisor would make each one several streams: 1.8x
// slower on a ResNeXt 1x1 layer) and, unless
// p.inline_pad, padded (pad.padded_h x pad.padded_w); `kernel_vec` packed,
// `out` blocked. With p.inline_pad `data` is the unpadded input: tiles
// whose taps all lie inside the image run the plain reduction, border tiles
// the same reduction with the taps in the padding skipped; no padded copy.
Stmt DirectConvCompute(const DirectConvParams& p, const std::string& data, int64_t data_block,
                       const std::string& kernel_vec, const std::string& out) {
  const int64_t HP = p.inline_pad ? p.h : p.pad.padded_h;
  const int64_t WP = p.inline_pad ? p.w : p.pad.padded_w;
  const int64_t top = p.inline_pad ? p.pad.top : 0, left = p.inline_pad ? p.pad.left : 0;
  // Where lane icb of the reduction's input-channel block `block` (of
  // ic_bn channels) lies at pixel (h, w) of `data`.
  auto data_index = [&](Expr n, Expr block, Expr h, Expr w, Expr icb) {
    if (data_block == p.ic_bn) {
      return (((n * (p.c / p.ic_bn) + block) * HP + h) * WP + w) * p.ic_bn + icb;
    }
    const int64_t q = data_block / p.ic_bn;  // reduction blocks in one of data
    Expr data_cb = block / q, lane = (block % q) * p.ic_bn + icb;
    return (((n * (p.c / data_block) + data_cb) * HP + h) * WP + w) * data_block + lane;
  };
  auto acc_index = [&](Expr owi, Expr o) { return owi * p.oc_bn + o; };

  // One output row's tiles (with split.parts > 1 those of part `part`); with
  // p.icc_outer only the chunk icc_o of input-channel blocks, added to
  // what earlier blocks left in `out`.
  auto row_at = [&](const RowParts& split, Expr n, Expr occ, Expr oh, Expr part, Expr icc_o) {
    // The tile of `width` columns from output column `col0`.
    auto tile_at = [&](Expr col0, int64_t width, const std::string& tag) {
      auto out_index = [&](Expr owi, Expr o) {
        return (((n * p.OCC + occ) * p.out_h + oh) * p.out_w + col0 + owi) * p.oc_bn + o;
      };
      Stmt init = RegisterTileLoops("_z" + tag, width, p.oc_bn, p.tile.vec, [&](Expr owi, Expr o) {
        return Store::Make("acc", 0.0, acc_index(owi, o));
      });
      if (p.icc_outer) {
        Stmt reload =
            RegisterTileLoops("_y" + tag, width, p.oc_bn, p.tile.vec, [&](Expr owi, Expr o) {
              return Store::Make("acc", Load::Make(out, out_index(owi, o)), acc_index(owi, o));
            });
        init = IfThenElse::Make(icc_o < 1, init, reload);
      }
      auto ih = [&](Expr kh) { return oh * p.stride_h + kh * p.dil_h - top; };
      auto iw = [&](Expr owi, Expr kw) { return (col0 + owi) * p.stride_w + kw * p.dil_w - left; };
      // One FMA step of the tile for input channel (icc, icb) and tap (kh, kw).
      // Border tiles (guarded) skip the taps that fall into the zero
      // padding instead of multiplying zeros: where the tile's position is
      // known (a row of one tile) the dead taps vanish at compile time.
      auto step = [&](bool guarded, const std::string& suffix) {
        return [&, guarded, suffix](Expr icc, Expr icb, Expr kh, Expr kw) {
          auto fma = [&](Expr owi, Expr o) {
            // With lane groups, lane o reads channel icb of its own group,
            // (o / group_k) * group_c + icb of the block: a load of the
            // block's lanes and a shuffle (the code generator's lane window).
            Expr lane = p.lane_groups > 1 ? icb + (o / (p.k / p.group)) * (p.c / p.group) : icb;
            Expr x =
                Load::Make(data, data_index(n, DataBlock(p, occ, icc), ih(kh), iw(owi, kw), lane));
            Expr wv = Load::Make(
                kernel_vec,
                ((((occ * p.ICC + icc) * p.r + kh) * p.s + kw) * ReduceLanes(p) + icb) * p.oc_bn +
                    o);
            return Store::Make("acc", Load::Make("acc", acc_index(owi, o)) + x * wv,
                               acc_index(owi, o));
          };
          if (!guarded) return RegisterTileLoops(suffix, width, p.oc_bn, p.tile.vec, fma);
          return Loop("r" + suffix, width, ForKind::kUnrolled, [&](Expr owi) {
            Expr inside = ih(kh) >= 0 && ih(kh) < p.h && iw(owi, kw) >= 0 && iw(owi, kw) < p.w;
            return IfThenElse::Make(inside,
                                    RegisterTileLoops(suffix, 1, p.oc_bn, p.tile.vec,
                                                      [&](Expr, Expr o) { return fma(owi, o); }));
          });
        };
      };
      // With p.icc_outer the reduction covers the chunk icc_o of blocks.
      DirectConvParams rp = p;
      if (p.icc_outer) rp.ICC = p.icc_chunk;
      auto reduce_with = [&](bool guarded, const std::string& suffix) {
        auto inner = step(guarded, suffix);
        return std::function<Stmt(Expr, Expr, Expr, Expr)>(
            [&, inner](Expr icc, Expr icb, Expr kh, Expr kw) {
              return inner(p.icc_outer ? icc_o * p.icc_chunk + icc : icc, icb, kh, kw);
            });
      };
      Stmt reduction = Reduction(rp, p.reduce, tag, reduce_with(false, "_m" + tag));
      if (p.inline_pad && p.padded()) {  // unpadded, no tile reaches past the image
        Expr inside =
            ih(0) >= 0 && ih(p.r - 1) < p.h && iw(0, 0) >= 0 && iw(width - 1, p.s - 1) < p.w;
        // iw grows with the column: the tile's first and last bound it.
        const BorderTaps border{[&](Expr kh) { return ih(kh) >= 0 && ih(kh) < p.h; },
                                [&](Expr kw) { return iw(0, kw) >= 0 && iw(width - 1, kw) < p.w; },
                                [&](Expr kw) { return iw(width - 1, kw) >= 0 && iw(0, kw) < p.w; },
                                reduce_with(true, "_q" + tag)};
        reduction = IfThenElse::Make(
            inside, reduction,
            Reduction(rp, p.reduce, "b" + tag, reduce_with(false, "_b" + tag), &border));
      }
      // The output's last write (with p.icc_outer, in the last chunk's
      // pass): where a compiled model's epilogue can be computed.
      Expr last_pass = p.icc_outer ? Expr(icc_o >= p.ICC / p.icc_chunk - 1) : Expr();
      Stmt store = RegisterTileLoops("_s" + tag, width, p.oc_bn, p.tile.vec, [&](Expr owi, Expr o) {
        return FinalStore(out, Load::Make("acc", acc_index(owi, o)), out_index(owi, o),
                          occ * p.oc_bn + o, last_pass);
      });
      return Allocate::Make("acc", width * p.oc_bn, MemoryScope::kStack,
                            Block::Make({init, reduction, store}));
    };
    return RowTilePartLoop(p.tile, split, part, "owc", tile_at);
  };
  Expr t = Var::Make("blk");
  const int64_t units = p.n * p.OCC;
  if (p.icc_outer) {
    // Parallel over (batch, group of p.oc_share output-channel blocks, band
    // of rows); each thread walks the input-channel blocks outermost (in
    // chunks of p.icc_chunk), so a chunk's weights stay in L1 across every
    // row of its band, and a group's output-channel blocks reduce each
    // chunk in turn while its input is in cache. The rows are cut into bands
    // only where there are fewer than kMinParallelUnits (batch, group)
    // pairs, e.g. 24 output channels in one block: one band would leave
    // every core but one idle. Where bands of one row are still too few, or
    // fewer than the image's rows would give (a pointwise convolution's
    // joined row), each row's tiles are split into parts.
    const int64_t groups = p.OCC / p.oc_share;
    const int64_t items = p.n * groups;
    const int64_t rows_per_band = RowsPerBand(p.out_h, items);
    const int64_t bands = CeilDiv(p.out_h, rows_per_band);
    const int64_t image_items = items * CeilDiv(p.image_rows, RowsPerBand(p.image_rows, items));
    const RowParts split = rows_per_band == 1 ? SplitRows(p.tile, items * bands,
                                                          std::max(kMinParallelUnits, image_items))
                                              : RowParts{1, p.tile.tiles + p.tile.narrow};
    const int64_t pieces = bands * split.parts;
    Expr g = t / pieces, band = (t % pieces) / split.parts, part = t % split.parts;
    Expr n = g / groups, first_occ = (g % groups) * p.oc_share;
    // body(occ) for each output-channel block of the group.
    auto each_block = [&](const std::string& name, const std::function<Stmt(Expr)>& body) {
      if (p.oc_share == 1) return body(first_occ);
      return Loop(name, p.oc_share, ForKind::kSerial, [&](Expr j) { return body(first_occ + j); });
    };
    Stmt rows = Loop("icco", p.ICC / p.icc_chunk, ForKind::kSerial, [&](Expr icc_o) {
      return each_block("ocs", [&](Expr occ) {
        return Loop("oho", rows_per_band, ForKind::kSerial, [&](Expr r) {
          if (bands == 1) return row_at(split, n, occ, r, part, icc_o);
          Expr oh = band * rows_per_band + r;
          Stmt row = row_at(split, n, occ, oh, part, icc_o);
          return p.out_h % rows_per_band == 0 ? row : IfThenElse::Make(oh < p.out_h, row);
        });
      });
    });
    // What the piece wrote is final once every input-channel block is added:
    // in each block of its group, its band's rows, or (rows cut into parts,
    // bands of one row) its part.
    Stmt ready = each_block("ocr", [&](Expr occ) {
      Expr u = n * p.OCC + occ;
      if (split.parts == 1) {
        Expr band_rows = p.out_h % rows_per_band == 0
                             ? Expr(rows_per_band)
                             : Min(Expr(rows_per_band), p.out_h - band * rows_per_band);
        return OutputReady::Make(out, (u * p.out_h + band * rows_per_band) * p.out_w * p.oc_bn, 1,
                                 band_rows * (p.out_w * p.oc_bn), 0);
      }
      const PartColumns cols = RowPartColumns(p.tile, split, part);
      return OutputReady::Make(out, ((u * p.out_h + band) * p.out_w + cols.first) * p.oc_bn, 1,
                               cols.count * p.oc_bn, 0);
    });
    return For::Make("blk", 0, items * pieces, ForKind::kParallel, Block::Make({rows, ready}));
  }
  // Parallel over (batch, output-channel block, row), and over parts of each
  // row's tiles where the rows are fewer than kMinParallelUnits or than the
  // image's (a pointwise convolution's joined row).
  const RowParts split =
      SplitRows(p.tile, units * p.out_h, std::max(kMinParallelUnits, units * p.image_rows));
  const int64_t pieces = p.out_h * split.parts;
  Expr n = t / (p.OCC * pieces), occ = (t / pieces) % p.OCC;
  Expr oh = (t % pieces) / split.parts, part = t % split.parts;
  Stmt row = row_at(split, n, occ, oh, part, Expr(0));
  const PartColumns cols = RowPartColumns(p.tile, split, part);  // the row's part, final
  row = Block::Make(
      {row,
       OutputReady::Make(out, (((n * p.OCC + occ) * p.out_h + oh) * p.out_w + cols.first) * p.oc_bn,
                         1, cols.count * p.oc_bn, 0)});
  return For::Make("blk", 0, units * pieces, ForKind::kParallel, row);
}

}  // namespace tunefleet

#include "tuner_core/templates/conv2d_nchwc_x86.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "tuner_core/ir/final_store.h"
#include "tuner_core/templates/loop_builder.h"
#include "tuner_core/templates/nchwc_layout.h"
#include "tuner_core/templates/winograd.h"
#include "tuner_core/workloads/conv2d.h"

namespace tunefleet {

constexpr Template::Names kNames = {"conv2d_nchwc.x86", "conv2d_nchw",
                                    "NCHW[x]c blocked conv2d: ow x oc register tile with vector "
                                    "FMAs, packed weights, parallel rows; Winograd F(2x2|4x4, "
                                    "3x3) for 3x3 stride-1 convolutions",
                                    /*is_gpu=*/false};
constexpr const char* kTemplateName = kNames.name;
namespace {

using namespace ir;  // NOLINT

// Parallel work items a kernel offers at least (when it has the rows and
// tiles): enough for the cores of a typical measuring host to share evenly.
constexpr int64_t kMinParallelUnits = 16;

// Rows per band of an icc_outer kernel over `rows` output rows and `units`
// (batch, output-channel block) pairs: bands only where the pairs are fewer
// than kMinParallelUnits.
int64_t RowsPerBand(int64_t rows, int64_t units) {
  return CeilDiv(rows, std::min(rows, CeilDiv(kMinParallelUnits, units)));
}

// A "reduce" knob value: its loop order ("c_kh_kw_ic", "c_kh_ic_kw" or
// "kh_kw_c_ic"), whether the input is read unpadded (the "_inline_pad"
// suffix) and whether the input-channel blocks go outside the rows (the
// "icc_outer_" prefix, whose order is the rest after "c_"; unpadded too;
// "icc_outer_shared_": with OcShare's groups and IccChunk's chunks).
// Or, "winograd_f<m>", Winograd's F(m x m, 3 x 3) (winograd.h) in place of
// the direct reduction.
struct ReduceChoice {
  std::string order;
  bool inline_pad = false;
  bool icc_outer = false;
  bool shared = false;   // "icc_outer_shared_": OcShare and IccChunk
  int64_t winograd = 0;  // the output tile's side, or 0: direct
};
ReduceChoice ParseReduce(absl::string_view value) {
  constexpr absl::string_view kInlinePad = "_inline_pad";
  constexpr absl::string_view kIccOuter = "icc_outer_";
  constexpr absl::string_view kShared = "shared_";
  ReduceChoice choice;
  choice.winograd = WinogradTileOf(value);
  if (choice.winograd > 0) return choice;
  if (absl::ConsumePrefix(&value, kIccOuter)) {
    choice.icc_outer = true;
    choice.shared = absl::ConsumePrefix(&value, kShared);
    choice.inline_pad = true;
    choice.order = absl::StrCat("c_", value);
  } else {
    choice.inline_pad = absl::ConsumeSuffix(&value, kInlinePad);
    choice.order = std::string(value);
  }
  return choice;
}

struct Params : ConvArgs {
  // ICC: the input-channel blocks one output channel reduces over (its
  // group's); OCC: all output-channel blocks; OCC_group: those of a group.
  int64_t ic_bn, oc_bn, ICC, OCC, OCC_group = 1;
  RowTiling tile;
  Padding pad;
  std::string reduce;  // loop order, without the "_inline_pad" suffix
  bool inline_pad = false;
  bool icc_outer = false;  // input-channel blocks outside the rows
  // With icc_outer: the output-channel blocks one work item computes and
  // the input-channel blocks each of its passes over the rows reduces
  // (OcShare, IccChunk; 1 and 1 unless the "icc_outer_shared_" orders ask).
  int64_t oc_share = 1, icc_chunk = 1;
  // The workload's output rows (out_h is 1 where TiledConvShape joined them).
  int64_t image_rows = 1;
};

// What an "icc_outer_shared_" work item keeps in cache: the weights of one
// output-channel block's input chunk in L1 (a quarter of the 32 KiB L1
// data cache x86 cores have had since Haswell) and those of its group of
// output-channel blocks in L2 (half of the 512 KiB of Zen 2-3's, the
// smallest of the x86 cores served).
constexpr int64_t kChunkWeightBytes = 8 * 1024;
constexpr int64_t kShareWeightBytes = 256 * 1024;

// The most of `blocks` blocks of `block_bytes` each (a divisor of
// `blocks`) that fit in `budget`, at least one.
int64_t MostBlocksWithin(int64_t blocks, int64_t block_bytes, int64_t budget) {
  int64_t most = 1;
  for (int64_t d = 1; d <= blocks; ++d) {
    if (blocks % d == 0 && d * block_bytes <= budget) most = d;
  }
  return most;
}

// The output-channel blocks of one "icc_outer_shared_" work item: the most
// (a divisor of a convolution group's blocks) whose weights fit in
// kShareWeightBytes, at least one. The item reduces each input chunk for
// all of them while the chunk is in cache, so the input comes from memory
// once per group rather than once per output-channel block: where it is
// larger than the caches (DenseNet's and ResNet's 1x1 layers on 56x56 with
// 256-512 channels: 3-6 MiB, read once per 16 output channels) that
// traffic is what the kernel waits on.
int64_t OcShare(const Params& p) {
  return MostBlocksWithin(p.OCC_group, p.ICC * p.ic_bn * p.oc_bn * p.r * p.s * 4,
                          kShareWeightBytes);
}

// The input-channel blocks one "icc_outer_shared_" pass over the rows
// reduces: the most (a divisor of ICC) whose weights for one output-channel
// block fit in kChunkWeightBytes, at least one; the partial sums then go
// through the output once per chunk rather than once per block.
int64_t IccChunk(const Params& p) {
  return MostBlocksWithin(p.ICC, p.ic_bn * p.oc_bn * p.r * p.s * 4, kChunkWeightBytes);
}

// The input-channel block of the data that block `icc` of output-channel
// block `occ`'s reduction reads: its group's first plus icc.
Expr DataBlock(const Params& p, Expr occ, Expr icc) {
  if (p.group == 1) return icc;
  return (occ / p.OCC_group) * p.ICC + icc;
}

// kernel [K][C/group][R][S] -> kernel_vec [K/oc_bn][C/group/ic_bn][R][S][ic_bn][oc_bn].
Stmt PackKernel(const Params& p, const std::string& dst) {
  const int64_t group_c = p.c / p.group;
  Expr t = Var::Make("pk_t");
  Expr occ = t / p.ICC, icc = t % p.ICC;
  Stmt body = Loop("pk_r", p.r, ForKind::kSerial, [&](Expr r) {
    return Loop("pk_s", p.s, ForKind::kSerial, [&](Expr s) {
      return Loop("pk_i", p.ic_bn, ForKind::kSerial, [&](Expr i) {
        return Loop("pk_o", p.oc_bn, ForKind::kSerial, [&](Expr o) {
          Expr src = (((occ * p.oc_bn + o) * group_c + icc * p.ic_bn + i) * p.r + r) * p.s + s;
          Expr dst_index =
              (((((occ * p.ICC + icc) * p.r + r) * p.s + s) * p.ic_bn + i) * p.oc_bn) + o;
          return Store::Make(dst, Load::Make("kernel", src), dst_index);
        });
      });
    });
  });
  return For::Make("pk_t", 0, p.OCC * p.ICC, ForKind::kParallel, body);
}

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
Stmt Reduction(const Params& p, const std::string& reduce, const std::string& tag,
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
            return loop("icb" + suffix, p.ic_bn, ForKind::kSerial,
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
        Stmt body = loop("icb", p.ic_bn, ForKind::kSerial, [&](Expr icb) {
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
          return loop("icb" + suffix, p.ic_bn, ForKind::kSerial,
                      [&](Expr icb) { return f(icc, icb, kh, kw); });
        });
      });
    });
  });
}

// The convolution proper: `data` is blocked by `data_block` channels (a
// multiple of ic_bn: its values are broadcast one at a time, so any block
// holding whole reduction blocks reads alike; a divisor would make each
// one several streams: 1.8x slower on a ResNeXt 1x1 layer) and, unless
// p.inline_pad, padded (pad.padded_h x pad.padded_w); `kernel_vec` packed,
// `out` blocked. With p.inline_pad `data` is the unpadded input: tiles
// whose taps all lie inside the image run the plain reduction, border tiles
// the same reduction with the taps in the padding skipped; no padded copy.
Stmt Compute(const Params& p, const std::string& data, int64_t data_block,
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
            Expr x =
                Load::Make(data, data_index(n, DataBlock(p, occ, icc), ih(kh), iw(owi, kw), icb));
            Expr wv = Load::Make(
                kernel_vec,
                ((((occ * p.ICC + icc) * p.r + kh) * p.s + kw) * p.ic_bn + icb) * p.oc_bn + o);
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
      Params rp = p;
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

// A config's parameters and its plan's geometry (all but the closures):
// what InstantiateTemplate assembles and Conv2dNchwcCopiesInput asks.
struct PlanParts {
  Params p;
  ReduceChoice choice;
  int64_t tile_ow = 1, vec = 1;
  BlockedConvPlan plan;
};

[[nodiscard]] absl::StatusOr<PlanParts> PlanOf(const Conv2dWorkload& conv, const Config& config) {
  PlanParts parts;
  Params& p = parts.p;
  // The compute tiles the joined shape; the plan's layout transforms keep
  // the workload's.
  static_cast<ConvArgs&>(p) = TiledConvShape(conv.conv_args());
  p.image_rows = conv.out_h();
  TF_ASSIGN_OR_RETURN(p.ic_bn, config.GetInt("tile_ic"));
  TF_ASSIGN_OR_RETURN(p.oc_bn, config.GetInt("tile_oc"));
  TF_ASSIGN_OR_RETURN(parts.tile_ow, config.GetInt("tile_ow"));
  TF_ASSIGN_OR_RETURN(parts.vec, config.GetInt("vec"));
  TF_ASSIGN_OR_RETURN(const std::string reduce, config.GetString("reduce"));
  parts.choice = ParseReduce(reduce);
  p.reduce = parts.choice.order;
  p.inline_pad = parts.choice.inline_pad;
  p.icc_outer = parts.choice.icc_outer;
  if ((p.c / p.group) % p.ic_bn != 0 || (p.k / p.group) % p.oc_bn != 0) {
    return absl::InvalidArgumentError(absl::StrCat("channel blocks ", p.ic_bn, "/", p.oc_bn,
                                                   " do not divide a group's C=", p.c / p.group,
                                                   "/K=", p.k / p.group));
  }
  p.ICC = p.c / p.group / p.ic_bn;
  p.OCC = p.k / p.oc_bn;
  p.OCC_group = p.k / p.group / p.oc_bn;
  if (parts.choice.shared) {
    p.oc_share = OcShare(p);
    p.icc_chunk = IccChunk(p);
  }
  TF_ASSIGN_OR_RETURN(p.tile, TileOutputRows(p.out_w, parts.tile_ow, p.oc_bn, parts.vec));

  parts.plan = BlockedConvGeometry(conv.conv_args(), p.ic_bn, p.oc_bn);
  if (parts.choice.winograd > 0) {
    if (!WinogradApplies(conv.conv_args())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reduce \"", reduce, "\" needs a 3x3, stride-1, undilated, ungrouped convolution"));
    }
    parts.plan.pad = WinogradInputPadding(conv.conv_args(), parts.choice.winograd);
    parts.plan.kernel_elems = WinogradKernelElements(conv.conv_args(), parts.choice.winograd);
    return parts;
  }
  p.pad = ConvInputPadding(p);
  parts.plan.compute_reads_unpadded = p.inline_pad;
  parts.plan.compute_reads_blocks_within = p.c / p.group;
  parts.plan.kernel_elems = p.k * (p.c / p.group) * p.r * p.s;
  return parts;
}

}  // namespace

[[nodiscard]] static absl::StatusOr<ConfigSpace> DefineTemplateSpace(const Workload& workload) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  const ConvArgs& a = conv->conv_args();
  ConfigSpace space;
  // Channel blocks within a group (the whole tensor when ungrouped).
  TF_RETURN_IF_ERROR(space.DefineKnob("tile_ic", Divisors(a.c / a.group, 64)));
  TF_RETURN_IF_ERROR(space.DefineKnob("tile_oc", Divisors(a.k / a.group, 64)));
  // Small counts, plus the row itself when it fits.
  TF_RETURN_IF_ERROR(DefineRowTileKnob(&space, a,
                                       {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 28, 32},
                                       /*max_whole_row=*/32));
  TF_RETURN_IF_ERROR(space.DefineKnob("vec", std::vector<int64_t>{4, 8, 16}));
  std::vector<std::string> orders = {"c_kh_kw_ic",
                                     "c_kh_ic_kw",
                                     "kh_kw_c_ic",
                                     "c_kh_kw_ic_inline_pad",
                                     "c_kh_ic_kw_inline_pad",
                                     "kh_kw_c_ic_inline_pad",
                                     "icc_outer_kh_kw_ic",
                                     "icc_outer_kh_ic_kw"};
  if (WinogradApplies(a)) {
    for (int64_t m : kWinogradTiles) orders.push_back(WinogradReduceValue(m));
  }
  orders.push_back("icc_outer_shared_kh_kw_ic");
  orders.push_back("icc_outer_shared_kh_ic_kw");
  TF_RETURN_IF_ERROR(space.DefineKnob("reduce", orders));
  // Orders that build one kernel: the taps' loops are empty for a 1x1
  // kernel (all orders alike) and kw's for one column (c_kh_ic_kw is
  // c_kh_kw_ic); without padding, border tiles never occur and the
  // "_inline_pad" orders read the input as the others do (in the NCHW
  // layout its blocking pass differs from theirs only in loop names).
  std::vector<int64_t> kernel_of;
  for (const std::string& value : orders) {
    const ReduceChoice r = ParseReduce(value);
    if (r.winograd > 0) {
      kernel_of.push_back(1000 + r.winograd);
      continue;
    }
    int64_t loops = 0;  // c_kh_kw_ic
    if (r.order == "kh_kw_c_ic" && a.r * a.s > 1) loops = 2;
    if (r.order == "c_kh_ic_kw" && a.s > 1) loops = 1;
    kernel_of.push_back((r.icc_outer ? 100 : 0) + (r.shared ? 100 : 0) +
                        (r.inline_pad && a.padded() ? 10 : 0) + loops);
  }
  TF_RETURN_IF_ERROR(space.DeclareSameKernelChoices("reduce", kernel_of));
  return space;
}

// Compute's register tile: width x (tile_oc / lanes) accumulators (width:
// the widest tile tile_ow cuts the row into); one step (input channel, tap)
// reads the tile_oc / lanes weight vectors of its input channel, each reused
// by every pixel of the tile, and one input value per pixel, broadcast (one
// register at a time).
[[nodiscard]] static absl::StatusOr<RegisterDemand> TemplateRegisterDemand(const Workload& workload,
                                                                           const Config& config) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  TF_ASSIGN_OR_RETURN(const int64_t tile_oc, config.GetInt("tile_oc"));
  TF_ASSIGN_OR_RETURN(const int64_t tile_ow, config.GetInt("tile_ow"));
  TF_ASSIGN_OR_RETURN(const int64_t vec, config.GetInt("vec"));
  TF_ASSIGN_OR_RETURN(const std::string reduce, config.GetString("reduce"));
  // Winograd's products tile the tiles as the direct kernel tiles a row
  // (WinogradCompute: at most as many as there are).
  int64_t width = ConvTileWidth(conv->conv_args(), tile_ow);
  if (const int64_t m = WinogradTileOf(reduce); m > 0) {
    width = std::min(width, WinogradTiles(conv->conv_args(), m));
  }
  RegisterDemand demand = RowTileDemand(width, tile_oc, vec);
  demand.broadcast_operands = 1;
  return demand;
}

[[nodiscard]] static absl::StatusOr<LoweredFunc> InstantiateTemplate(const Workload& workload,
                                                                     const Config& config) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  TF_ASSIGN_OR_RETURN(PlanParts parts, PlanOf(*conv, config));
  const Params& p = parts.p;
  BlockedConvPlan& plan = parts.plan;
  if (parts.choice.winograd > 0) {
    const WinogradConv w{conv->conv_args(),
                         parts.choice.winograd,
                         p.ic_bn,
                         p.oc_bn,
                         ConvTileWidth(conv->conv_args(), parts.tile_ow),
                         parts.vec};
    plan.pack_kernel = [&](const std::string& vec) { return WinogradPackKernel(w, vec); };
    plan.compute = [&](const std::string& data, int64_t, const std::string& kernel_vec,
                       const std::string& out) {
      return WinogradCompute(w, data, kernel_vec, out);
    };
    return AssembleBlockedConv(plan, Conv2dNchwcX86Template(), workload);
  }
  plan.pack_kernel = [&](const std::string& kernel_vec) { return PackKernel(p, kernel_vec); };
  plan.compute = [&](const std::string& data, int64_t block, const std::string& vec,
                     const std::string& out) { return Compute(p, data, block, vec, out); };
  return AssembleBlockedConv(plan, Conv2dNchwcX86Template(), workload);
}

[[nodiscard]] absl::StatusOr<bool> Conv2dNchwcCopiesInput(const Workload& workload,
                                                          const Config& config,
                                                          int64_t data_block) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  TF_ASSIGN_OR_RETURN(const PlanParts parts, PlanOf(*conv, config));
  if (data_block < 1 || parts.p.c % data_block != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("channel block ", data_block, " does not divide C=", parts.p.c));
  }
  return BlockedConvCopiesInput(parts.plan, data_block);
}

std::string Conv2dNchwcDefaultReduce(const ConvArgs& conv) {
  if (const int64_t m = WinogradDefaultTile(conv); m > 0) return WinogradReduceValue(m);
  if (PointwiseConv(conv)) return "icc_outer_shared_kh_kw_ic";
  if (conv.stride_h == 1 && conv.stride_w == 1 && conv.group == 1 &&
      LiveTapShare(conv) < kUnpaddedBelowLiveTapShare) {
    return "icc_outer_kh_ic_kw";
  }
  return "c_kh_kw_ic";
}

const Template& Conv2dNchwcX86Template() {
  static const Template kTemplate(kNames, &DefineTemplateSpace, &InstantiateTemplate,
                                  &TemplateRegisterDemand);
  return kTemplate;
}

}  // namespace tunefleet

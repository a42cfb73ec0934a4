#include "tuner_core/templates/depthwise_conv2d_nchwc_x86.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/ir/final_store.h"
#include "tuner_core/templates/loop_builder.h"
#include "tuner_core/templates/nchwc_layout.h"
#include "tuner_core/workloads/depthwise_conv2d.h"

namespace tunefleet {

constexpr Template::Names kNames = {
    "depthwise_conv2d_nchwc.x86", "depthwise_conv2d_nchw",
    "NCHW[x]c blocked depthwise conv2d: ow x c register tile with vector FMAs, parallel rows",
    /*is_gpu=*/false};
constexpr const char* kTemplateName = kNames.name;
namespace {

using namespace ir;  // NOLINT

struct Params : ConvArgs {
  int64_t c_bn, CC;
  RowTiling tile;
  bool unroll_kw;
  Padding pad;
  // The workload's output rows (out_h is 1 where TiledConvShape joined them).
  int64_t image_rows = 1;
};

// kernel [C][1][R][S] -> kernel_vec [C/c_bn][R][S][c_bn].
Stmt PackKernel(const Params& p, const std::string& dst) {
  Expr cc = Var::Make("pk_c");
  Stmt body = Loop("pk_r", p.r, ForKind::kSerial, [&](Expr r) {
    return Loop("pk_s", p.s, ForKind::kSerial, [&](Expr s) {
      return Loop("pk_b", p.c_bn, ForKind::kSerial, [&](Expr b) {
        return Store::Make(dst, Load::Make("kernel", ((cc * p.c_bn + b) * p.r + r) * p.s + s),
                           ((cc * p.r + r) * p.s + s) * p.c_bn + b);
      });
    });
  });
  return For::Make("pk_c", 0, p.CC, ForKind::kParallel, body);
}

// Reads the blocked input unpadded ([N][C/c_bn][H][W][c_bn]). Tiles whose
// every tap lies inside the image (the interior: nearly all of a large
// image) run unguarded; border tiles skip the taps that fall into the zero
// padding, so no padded copy of the input is ever made (the padding pass
// costs about as much as a depthwise layer's arithmetic).
Stmt Compute(const Params& p, const std::string& data, const std::string& kernel_vec,
             const std::string& out) {
  // Parallel over (batch, channel block, row), and over parts of each row's
  // tiles where a joined row (TiledConvShape) would give fewer items than
  // the image's rows.
  const int64_t units = p.n * p.CC;
  const RowParts split = SplitRows(p.tile, units * p.out_h, units * p.image_rows);
  const int64_t pieces = p.out_h * split.parts;
  Expr t = Var::Make("blk");
  Expr n = t / (p.CC * pieces), cc = (t / pieces) % p.CC;
  Expr oh = (t % pieces) / split.parts, part = t % split.parts;
  auto acc_index = [&](Expr owi, Expr b) { return owi * p.c_bn + b; };
  // The tile of `width` columns from output column `col0`.
  auto tile_at = [&](Expr col0, int64_t width, const std::string& tag) {
    Stmt init = RegisterTileLoops("_z" + tag, width, p.c_bn, p.tile.vec, [&](Expr owi, Expr b) {
      return Store::Make("acc", 0.0, acc_index(owi, b));
    });
    auto ih = [&](Expr kh) { return oh * p.stride_h + kh * p.dil_h - p.pad.top; };
    auto iw = [&](Expr owi, Expr kw) {
      return (col0 + owi) * p.stride_w + kw * p.dil_w - p.pad.left;
    };
    // The FMAs of one tap for one output pixel of the tile.
    auto tap = [&](Expr kh, Expr kw, Expr owi, const std::string& suffix) {
      return VectorLoops(suffix, p.c_bn, p.tile.vec, [&](Expr b) {
        Expr x =
            Load::Make(data, (((n * p.CC + cc) * p.h + ih(kh)) * p.w + iw(owi, kw)) * p.c_bn + b);
        Expr w = Load::Make(kernel_vec, ((cc * p.r + kh) * p.s + kw) * p.c_bn + b);
        return Store::Make("acc", Load::Make("acc", acc_index(owi, b)) + x * w, acc_index(owi, b));
      });
    };
    const ForKind kw_kind = p.unroll_kw ? ForKind::kUnrolled : ForKind::kSerial;
    Stmt interior = Loop("kh" + tag, p.r, ForKind::kSerial, [&](Expr kh) {
      return Loop("kw" + tag, p.s, kw_kind, [&](Expr kw) {
        return Loop("r_m" + tag, width, ForKind::kUnrolled,
                    [&](Expr owi) { return tap(kh, kw, owi, "_m" + tag); });
      });
    });
    Stmt border = Loop("khb" + tag, p.r, ForKind::kSerial, [&](Expr kh) {
      Stmt columns = Loop("kwb" + tag, p.s, kw_kind, [&](Expr kw) {
        return Loop("r_b" + tag, width, ForKind::kUnrolled, [&](Expr owi) {
          return IfThenElse::Make(iw(owi, kw) >= 0 && iw(owi, kw) < p.w,
                                  tap(kh, kw, owi, "_b" + tag));
        });
      });
      return IfThenElse::Make(ih(kh) >= 0 && ih(kh) < p.h, columns);
    });
    Expr inside = ih(0) >= 0 && ih(p.r - 1) < p.h && iw(0, 0) >= 0 && iw(width - 1, p.s - 1) < p.w;
    Stmt store = RegisterTileLoops("_s" + tag, width, p.c_bn, p.tile.vec, [&](Expr owi, Expr b) {
      return FinalStore(out, Load::Make("acc", acc_index(owi, b)),
                        (((n * p.CC + cc) * p.out_h + oh) * p.out_w + col0 + owi) * p.c_bn + b,
                        cc * p.c_bn + b);
    });
    return Allocate::Make("acc", width * p.c_bn, MemoryScope::kStack,
                          Block::Make({init, IfThenElse::Make(inside, interior, border), store}));
  };
  Stmt row = RowTilePartLoop(p.tile, split, part, "owc", tile_at);
  const PartColumns cols = RowPartColumns(p.tile, split, part);  // the row's part, final
  row =
      Block::Make({row, OutputReady::Make(
                            out, (((n * p.CC + cc) * p.out_h + oh) * p.out_w + cols.first) * p.c_bn,
                            1, cols.count * p.c_bn, 0)});
  return For::Make("blk", 0, units * pieces, ForKind::kParallel, row);
}

}  // namespace

[[nodiscard]] static absl::StatusOr<ConfigSpace> DefineTemplateSpace(const Workload& workload) {
  TF_ASSIGN_OR_RETURN(const DepthwiseConv2dWorkload* conv,
                      DepthwiseConv2dWorkload::From(workload, kTemplateName));
  ConfigSpace space;
  TF_RETURN_IF_ERROR(space.DefineKnob("tile_c", Divisors(conv->c(), 64)));
  TF_RETURN_IF_ERROR(DefineRowTileKnob(&space, conv->conv_args(),
                                       {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 28},
                                       /*max_whole_row=*/28));
  TF_RETURN_IF_ERROR(space.DefineKnob("vec", std::vector<int64_t>{4, 8, 16}));
  TF_RETURN_IF_ERROR(space.DefineKnob("unroll_kw", std::vector<int64_t>{0, 1}));
  return space;
}

// Compute's register tile: width x (tile_c / lanes) accumulators (width:
// the widest tile tile_ow cuts the row into); one tap reads its tile_c /
// lanes weight vectors, each reused by every pixel of the tile, and for each
// FMA its own input vector (no broadcast: one channel's input meets only
// that channel's weight), one at a time.
[[nodiscard]] static absl::StatusOr<RegisterDemand> TemplateRegisterDemand(const Workload& workload,
                                                                           const Config& config) {
  TF_ASSIGN_OR_RETURN(const DepthwiseConv2dWorkload* conv,
                      DepthwiseConv2dWorkload::From(workload, kTemplateName));
  TF_ASSIGN_OR_RETURN(const int64_t tile_c, config.GetInt("tile_c"));
  TF_ASSIGN_OR_RETURN(const int64_t tile_ow, config.GetInt("tile_ow"));
  TF_ASSIGN_OR_RETURN(const int64_t vec, config.GetInt("vec"));
  RegisterDemand demand = RowTileDemand(ConvTileWidth(conv->conv_args(), tile_ow), tile_c, vec);
  demand.vector_operands += 1;  // the input vector of each FMA
  return demand;
}

[[nodiscard]] static absl::StatusOr<LoweredFunc> InstantiateTemplate(const Workload& workload,
                                                                     const Config& config) {
  TF_ASSIGN_OR_RETURN(const DepthwiseConv2dWorkload* conv,
                      DepthwiseConv2dWorkload::From(workload, kTemplateName));
  Params p;
  // The compute tiles the joined shape; the plan's layout transforms keep
  // the workload's.
  static_cast<ConvArgs&>(p) = TiledConvShape(conv->conv_args());
  p.image_rows = conv->out_h();
  TF_ASSIGN_OR_RETURN(p.c_bn, config.GetInt("tile_c"));
  TF_ASSIGN_OR_RETURN(int64_t tile_ow, config.GetInt("tile_ow"));
  TF_ASSIGN_OR_RETURN(int64_t vec, config.GetInt("vec"));
  TF_ASSIGN_OR_RETURN(int64_t unroll_kw, config.GetInt("unroll_kw"));
  if (p.c % p.c_bn != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("channel block ", p.c_bn, " does not divide C=", p.c));
  }
  p.unroll_kw = unroll_kw != 0;
  p.CC = p.c / p.c_bn;
  TF_ASSIGN_OR_RETURN(p.tile, TileOutputRows(p.out_w, tile_ow, p.c_bn, vec));

  BlockedConvPlan plan = BlockedConvGeometry(conv->conv_args(), p.c_bn, p.c_bn);
  p.pad = ConvInputPadding(p);
  plan.kernel_elems = p.c * p.r * p.s;
  plan.compute_reads_unpadded = true;
  plan.pack_kernel = [&](const std::string& kernel_vec) { return PackKernel(p, kernel_vec); };
  // data_block is c_bn: a depthwise workload has no in_block.
  plan.compute = [&](const std::string& data, int64_t, const std::string& kernel_vec,
                     const std::string& out) { return Compute(p, data, kernel_vec, out); };
  return AssembleBlockedConv(plan, DepthwiseConv2dNchwcX86Template(), workload);
}

const Template& DepthwiseConv2dNchwcX86Template() {
  static const Template kTemplate(kNames, &DefineTemplateSpace, &InstantiateTemplate,
                                  &TemplateRegisterDemand);
  return kTemplate;
}

}  // namespace tunefleet

#include "tuner_core/templates/conv2d_nchwc_x86.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/templates/loop_builder.h"
#include "tuner_core/templates/nchwc_layout.h"
#include "tuner_core/workloads/conv2d.h"

namespace tunefleet {

constexpr Template::Names kNames = {"conv2d_nchwc.x86", "conv2d_nchw",
                                    "NCHW[x]c blocked conv2d: ow x oc register tile with vector "
                                    "FMAs, packed weights, parallel rows",
                                    /*is_gpu=*/false};
constexpr const char* kTemplateName = kNames.name;
namespace {

using namespace ir;  // NOLINT

struct Params : ConvArgs {
  int64_t ic_bn, oc_bn, ICC, OCC;
  RowTiling tile;
  Padding pad;
  std::string reduce;
};

// kernel [K][C][R][S] -> kernel_vec [K/oc_bn][C/ic_bn][R][S][ic_bn][oc_bn].
Stmt PackKernel(const Params& p, const std::string& dst) {
  Expr t = Var::Make("pk_t");
  Expr occ = t / p.ICC, icc = t % p.ICC;
  Stmt body = Loop("pk_r", p.r, ForKind::kSerial, [&](Expr r) {
    return Loop("pk_s", p.s, ForKind::kSerial, [&](Expr s) {
      return Loop("pk_i", p.ic_bn, ForKind::kSerial, [&](Expr i) {
        return Loop("pk_o", p.oc_bn, ForKind::kSerial, [&](Expr o) {
          Expr src = (((occ * p.oc_bn + o) * p.c + icc * p.ic_bn + i) * p.r + r) * p.s + s;
          Expr dst_index =
              (((((occ * p.ICC + icc) * p.r + r) * p.s + s) * p.ic_bn + i) * p.oc_bn) + o;
          return Store::Make(dst, Load::Make("kernel", src), dst_index);
        });
      });
    });
  });
  return For::Make("pk_t", 0, p.OCC * p.ICC, ForKind::kParallel, body);
}

// The convolution proper: `data` is blocked and padded (pad.padded_h x
// pad.padded_w), `kernel_vec` packed, `out` blocked with rows OWP wide.
Stmt Compute(const Params& p, const std::string& data, const std::string& kernel_vec,
             const std::string& out) {
  Expr t = Var::Make("blk");
  Expr n = t / (p.OCC * p.out_h), occ = (t / p.out_h) % p.OCC, oh = t % p.out_h;
  const int64_t HP = p.pad.padded_h, WP = p.pad.padded_w;
  auto acc_index = [&](Expr owi, Expr o) { return owi * p.oc_bn + o; };

  Stmt row = Loop("owc", p.tile.tiles, ForKind::kSerial, [&](Expr owc) {
    Stmt init = RegisterTileLoops("_z", p.tile.width, p.oc_bn, p.tile.vec, [&](Expr owi, Expr o) {
      return Store::Make("acc", 0.0, acc_index(owi, o));
    });
    // One FMA step of the tile for input channel (icc, icb) and tap (kh, kw).
    auto step = [&](Expr icc, Expr icb, Expr kh, Expr kw, const std::string& suffix) {
      return RegisterTileLoops(suffix, p.tile.width, p.oc_bn, p.tile.vec, [&](Expr owi, Expr o) {
        Expr x = Load::Make(data, (((n * p.ICC + icc) * HP + oh * p.stride_h + kh * p.dil_h) * WP +
                                   (owc * p.tile.width + owi) * p.stride_w + kw * p.dil_w) *
                                          p.ic_bn +
                                      icb);
        Expr w = Load::Make(
            kernel_vec,
            ((((occ * p.ICC + icc) * p.r + kh) * p.s + kw) * p.ic_bn + icb) * p.oc_bn + o);
        return Store::Make("acc", Load::Make("acc", acc_index(owi, o)) + x * w, acc_index(owi, o));
      });
    };
    Stmt reduction;
    if (p.reduce == "c_kh_kw_ic") {
      reduction = Loop("icc", p.ICC, ForKind::kSerial, [&](Expr icc) {
        return Loop("kh", p.r, ForKind::kSerial, [&](Expr kh) {
          return Loop("kw", p.s, ForKind::kSerial, [&](Expr kw) {
            return Loop("icb", p.ic_bn, ForKind::kSerial,
                        [&](Expr icb) { return step(icc, icb, kh, kw, "_m"); });
          });
        });
      });
    } else if (p.reduce == "c_kh_ic_kw") {
      reduction = Loop("icc", p.ICC, ForKind::kSerial, [&](Expr icc) {
        return Loop("kh", p.r, ForKind::kSerial, [&](Expr kh) {
          return Loop("icb", p.ic_bn, ForKind::kSerial, [&](Expr icb) {
            return Loop("kw", p.s, ForKind::kUnrolled,
                        [&](Expr kw) { return step(icc, icb, kh, kw, "_m"); });
          });
        });
      });
    } else {  // kh_kw_c_ic
      reduction = Loop("kh", p.r, ForKind::kSerial, [&](Expr kh) {
        return Loop("kw", p.s, ForKind::kSerial, [&](Expr kw) {
          return Loop("icc", p.ICC, ForKind::kSerial, [&](Expr icc) {
            return Loop("icb", p.ic_bn, ForKind::kSerial,
                        [&](Expr icb) { return step(icc, icb, kh, kw, "_m"); });
          });
        });
      });
    }
    Stmt store = RegisterTileLoops("_s", p.tile.width, p.oc_bn, p.tile.vec, [&](Expr owi, Expr o) {
      return Store::Make(
          out, Load::Make("acc", acc_index(owi, o)),
          (((n * p.OCC + occ) * p.out_h + oh) * p.tile.padded_w + owc * p.tile.width + owi) *
                  p.oc_bn +
              o);
    });
    return Allocate::Make("acc", p.tile.width * p.oc_bn, MemoryScope::kStack,
                          Block::Make({init, reduction, store}));
  });
  return For::Make("blk", 0, p.n * p.OCC * p.out_h, ForKind::kParallel, row);
}

}  // namespace

[[nodiscard]] static absl::StatusOr<ConfigSpace> DefineTemplateSpace(const Workload& workload) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  ConfigSpace space;
  TF_RETURN_IF_ERROR(space.DefineKnob("tile_ic", Divisors(conv->c(), 64)));
  TF_RETURN_IF_ERROR(space.DefineKnob("tile_oc", Divisors(conv->k(), 64)));
  // Small counts, plus the row itself when it fits.
  TF_RETURN_IF_ERROR(space.DefineKnob(
      "tile_ow",
      TileWidthCandidates(conv->out_w(), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 28, 32},
                          /*max_whole_row=*/32)));
  TF_RETURN_IF_ERROR(space.DefineKnob("vec", std::vector<int64_t>{4, 8, 16}));
  TF_RETURN_IF_ERROR(space.DefineKnob(
      "reduce", std::vector<std::string>{"c_kh_kw_ic", "c_kh_ic_kw", "kh_kw_c_ic"}));
  return space;
}

[[nodiscard]] static absl::StatusOr<LoweredFunc> InstantiateTemplate(const Workload& workload,
                                                                     const Config& config) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  Params p;
  static_cast<ConvArgs&>(p) = conv->conv_args();
  TF_ASSIGN_OR_RETURN(p.ic_bn, config.GetInt("tile_ic"));
  TF_ASSIGN_OR_RETURN(p.oc_bn, config.GetInt("tile_oc"));
  TF_ASSIGN_OR_RETURN(int64_t tile_ow, config.GetInt("tile_ow"));
  TF_ASSIGN_OR_RETURN(int64_t vec, config.GetInt("vec"));
  TF_ASSIGN_OR_RETURN(p.reduce, config.GetString("reduce"));
  if (p.c % p.ic_bn != 0 || p.k % p.oc_bn != 0) {
    return absl::InvalidArgumentError(absl::StrCat("channel blocks ", p.ic_bn, "/", p.oc_bn,
                                                   " do not divide C=", p.c, "/K=", p.k));
  }
  p.ICC = p.c / p.ic_bn;
  p.OCC = p.k / p.oc_bn;
  TF_ASSIGN_OR_RETURN(p.tile, TileOutputRows(p.out_w, tile_ow, p.oc_bn, vec));

  BlockedConvPlan plan = BlockedConvGeometry(p, p.tile, p.ic_bn, p.oc_bn);
  p.pad = plan.pad;
  plan.kernel_elems = p.k * p.c * p.r * p.s;
  plan.pack_kernel = [&](const std::string& kernel_vec) { return PackKernel(p, kernel_vec); };
  plan.compute = [&](const std::string& data, const std::string& kernel_vec,
                     const std::string& out) { return Compute(p, data, kernel_vec, out); };
  return AssembleBlockedConv(plan, Conv2dNchwcX86Template(), workload);
}

const Template& Conv2dNchwcX86Template() {
  static const Template kTemplate(kNames, &DefineTemplateSpace, &InstantiateTemplate);
  return kTemplate;
}

}  // namespace tunefleet

#include "tuner_core/templates/conv2d_direct_cuda.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/templates/gpu_schedule.h"
#include "tuner_core/templates/loop_builder.h"
#include "tuner_core/workloads/conv2d.h"

namespace tunefleet {

constexpr Template::Names kNames = {
    "conv2d_direct.cuda", "conv2d_nchw",
    "CUDA direct conv2d: filters x rows x columns block tile, input window and weights staged "
    "in shared memory per input-channel step",
    /*is_gpu=*/true};
constexpr const char* kTemplateName = kNames.name;

using namespace ir;  // NOLINT

[[nodiscard]] static absl::StatusOr<ConfigSpace> DefineTemplateSpace(const Workload& workload) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  const ConvArgs& a = conv->conv_args();
  if (a.in_block != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        kTemplateName, " reads NCHW tensors: in_block=", a.in_block, " is for blocked templates"));
  }
  if (a.group != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(kTemplateName, " computes ungrouped convolutions only (group=", a.group, ")"));
  }
  ConfigSpace space;
  TF_RETURN_IF_ERROR(space.DefineSplit("tile_f", a.k, GpuThreadSplit(64, 8)));
  TF_RETURN_IF_ERROR(space.DefineSplit("tile_y", a.out_h, GpuThreadSplit(16, 4)));
  TF_RETURN_IF_ERROR(space.DefineSplit("tile_x", a.out_w, GpuThreadSplit(32, 4)));
  TF_RETURN_IF_ERROR(space.DefineSplit("tile_rc", a.c, {.max_factor = 16}));
  TF_RETURN_IF_ERROR(space.DefineKnob("unroll_rs", {0, 1}));
  return space;
}

[[nodiscard]] static absl::StatusOr<LoweredFunc> InstantiateTemplate(const Workload& workload,
                                                                     const Config& config) {
  TF_ASSIGN_OR_RETURN(const Conv2dWorkload* conv, Conv2dWorkload::From(workload, kTemplateName));
  const ConvArgs& a = conv->conv_args();
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> tile_f, config.GetSplit("tile_f"));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> tile_y, config.GetSplit("tile_y"));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> tile_x, config.GetSplit("tile_x"));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> tile_rc, config.GetSplit("tile_rc"));
  TF_ASSIGN_OR_RETURN(int64_t unroll_rs, config.GetInt("unroll_rs"));
  if (tile_f.size() != 3 || tile_y.size() != 3 || tile_x.size() != 3 || tile_rc.size() != 2 ||
      tile_f[0] * tile_f[1] * tile_f[2] != a.k || tile_y[0] * tile_y[1] * tile_y[2] != a.out_h ||
      tile_x[0] * tile_x[1] * tile_x[2] != a.out_w || tile_rc[0] * tile_rc[1] != a.c) {
    return absl::InvalidArgumentError(absl::StrCat(
        kTemplateName,
        ": tile_f, tile_y, tile_x and tile_rc must split K, out_h, out_w and C exactly"));
  }
  const int64_t tf = tile_f[1], fi = tile_f[2], ty = tile_y[1], yi = tile_y[2];
  const int64_t tx = tile_x[1], xi = tile_x[2], rci = tile_rc[1];
  const int64_t BF = tf * fi, BY = ty * yi, BX = tx * xi;
  const int64_t R = a.r, S = a.s, C = a.c, H = a.h, W = a.w, OH = a.out_h, OW = a.out_w;
  // The input window a BY x BX output tile reads.
  const int64_t win_h = (BY - 1) * a.stride_h + (R - 1) * a.dil_h + 1;
  const int64_t win_w = (BX - 1) * a.stride_w + (S - 1) * a.dil_w + 1;
  const int64_t f_blocks = tile_f[0];

  GpuBlockShape shape{.threads = {tx, ty, tf}};
  Expr n = Var::Make("n"), f0 = Var::Make("f0"), y0 = Var::Make("y0"), x0 = Var::Make("x0");

  auto body = [&](Expr tfv, Expr tyv, Expr txv) -> Stmt {
    Expr t = (tfv * ty + tyv) * tx + txv;
    auto acc_index = [&](Expr i, Expr j, Expr k) { return (i * yi + j) * xi + k; };
    Stmt init = Loop("i0", fi, ForKind::kUnrolled, [&](Expr i) {
      return Loop("j0", yi, ForKind::kUnrolled, [&](Expr j) {
        return Loop("k0", xi, ForKind::kUnrolled,
                    [&](Expr k) { return Store::Make("acc", 0.0, acc_index(i, j, k)); });
      });
    });

    auto c_step = [&](Expr co) -> Stmt {
      // Ds[c][h][w] = data[n][co*rci + c][y0*sh - pad_top + h][x0*sw - pad_left + w], 0 outside.
      Stmt load_d = CooperativeLoad(shape, "ld", rci * win_h * win_w, t, [&](Expr e) {
        Expr c = e / (win_h * win_w), hw = e % (win_h * win_w);
        Expr h = hw / win_w, w = hw % win_w;
        Expr ih = y0 * a.stride_h - a.pad_top + h, iw = x0 * a.stride_w - a.pad_left + w;
        Expr inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
        return IfThenElse::Make(
            inside,
            Store::Make("Ds", Load::Make("data", ((n * C + co * rci + c) * H + ih) * W + iw), e),
            Store::Make("Ds", 0.0, e));
      });
      // Ws[f][c][r][s] = weight[f0 + f][co*rci + c][r][s].
      Stmt load_w = CooperativeLoad(shape, "lw", BF * rci * R * S, t, [&](Expr e) {
        Expr f = e / (rci * R * S), crs = e % (rci * R * S);
        return Store::Make("Ws", Load::Make("kernel", ((f0 + f) * C + co * rci) * R * S + crs), e);
      });
      const ForKind rs_kind = unroll_rs ? ForKind::kUnrolled : ForKind::kSerial;
      Stmt compute = Loop("c", rci, ForKind::kSerial, [&](Expr c) {
        return Loop("r", R, rs_kind, [&](Expr r) {
          return Loop("s", S, rs_kind, [&](Expr s) {
            return Loop("i", fi, ForKind::kUnrolled, [&](Expr i) {
              return Loop("j", yi, ForKind::kUnrolled, [&](Expr j) {
                return Loop("k", xi, ForKind::kUnrolled, [&](Expr k) {
                  Expr h = (j * ty + tyv) * a.stride_h + r * a.dil_h;
                  Expr w = (k * tx + txv) * a.stride_w + s * a.dil_w;
                  Expr d = Load::Make("Ds", (c * win_h + h) * win_w + w);
                  Expr wt = Load::Make("Ws", (((i * tf + tfv) * rci + c) * R + r) * S + s);
                  Expr idx = acc_index(i, j, k);
                  return Store::Make("acc", Load::Make("acc", idx) + d * wt, idx);
                });
              });
            });
          });
        });
      });
      return Block::Make({load_d, load_w, Barrier::Make(), compute, Barrier::Make()});
    };
    Stmt reduction = Loop("co", tile_rc[0], ForKind::kSerial, c_step);
    Stmt store = Loop("i1", fi, ForKind::kUnrolled, [&](Expr i) {
      return Loop("j1", yi, ForKind::kUnrolled, [&](Expr j) {
        return Loop("k1", xi, ForKind::kUnrolled, [&](Expr k) {
          Expr f = f0 + i * tf + tfv, y = y0 + j * ty + tyv, x = x0 + k * tx + txv;
          return Store::Make("output", Load::Make("acc", acc_index(i, j, k)),
                             ((n * a.k + f) * OH + y) * OW + x);
        });
      });
    });
    return Allocate::Make("acc", fi * yi * xi, MemoryScope::kStack,
                          Block::Make({init, reduction, store}));
  };

  Stmt threads = Loop("tz", tf, ForKind::kThreadIdxZ, [&](Expr tfv) {
    return Loop("ty", ty, ForKind::kThreadIdxY, [&](Expr tyv) {
      return Loop("tx", tx, ForKind::kThreadIdxX, [&](Expr txv) { return body(tfv, tyv, txv); });
    });
  });
  Stmt shared =
      Allocate::Make("Ds", rci * win_h * win_w, MemoryScope::kShared,
                     Allocate::Make("Ws", BF * rci * R * S, MemoryScope::kShared, threads));
  // blockIdx.z covers (image, filter block); the tile's origin is bound by lets
  // so the body reads the same whether or not a loop of extent 1 was elided.
  Stmt nest = Loop("bz", a.n * f_blocks, ForKind::kBlockIdxZ, [&](Expr bz) {
    return Loop("by", tile_y[0], ForKind::kBlockIdxY, [&](Expr by) {
      return Loop("bx", tile_x[0], ForKind::kBlockIdxX, [&](Expr bx) {
        return LetStmt::Make(
            "n", bz / f_blocks,
            LetStmt::Make("f0", (bz % f_blocks) * BF,
                          LetStmt::Make("y0", by * BY, LetStmt::Make("x0", bx * BX, shared))));
      });
    });
  });

  return KernelFunc(Conv2dDirectCudaTemplate(), workload, nest);
}

const Template& Conv2dDirectCudaTemplate() {
  static const Template kTemplate(kNames, &DefineTemplateSpace, &InstantiateTemplate);
  return kTemplate;
}

}  // namespace tunefleet

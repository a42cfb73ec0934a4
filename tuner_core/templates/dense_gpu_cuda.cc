#include "tuner_core/templates/dense_gpu_cuda.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/templates/gpu_schedule.h"
#include "tuner_core/templates/loop_builder.h"
#include "tuner_core/workloads/dense.h"

namespace tunefleet {

constexpr Template::Names kNames = {
    "dense_gpu.cuda", "dense",
    "CUDA dense: block tile in shared memory, per-thread register tile, K staged in steps",
    /*is_gpu=*/true};
constexpr const char* kTemplateName = kNames.name;

using namespace ir;  // NOLINT

[[nodiscard]] static absl::StatusOr<ConfigSpace> DefineTemplateSpace(const Workload& workload) {
  TF_ASSIGN_OR_RETURN(const DenseWorkload* dense, DenseWorkload::From(workload, kTemplateName));
  ConfigSpace space;
  TF_RETURN_IF_ERROR(space.DefineSplit("tile_m", dense->m(), GpuThreadSplit(32, 8)));
  TF_RETURN_IF_ERROR(space.DefineSplit("tile_n", dense->n(), GpuThreadSplit(64, 8)));
  TF_RETURN_IF_ERROR(space.DefineSplit("tile_k", dense->k(), {.max_factor = 32}));
  TF_RETURN_IF_ERROR(space.DefineKnob("interleave", {0, 1}));
  TF_RETURN_IF_ERROR(space.DefineKnob("vec_load", {1, 2, 4}));
  TF_RETURN_IF_ERROR(space.DefineKnob("unroll_k", {0, 1}));
  return space;
}

[[nodiscard]] static absl::StatusOr<LoweredFunc> InstantiateTemplate(const Workload& workload,
                                                                     const Config& config) {
  TF_ASSIGN_OR_RETURN(const DenseWorkload* dense, DenseWorkload::From(workload, kTemplateName));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> tile_m, config.GetSplit("tile_m"));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> tile_n, config.GetSplit("tile_n"));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> tile_k, config.GetSplit("tile_k"));
  TF_ASSIGN_OR_RETURN(int64_t interleave, config.GetInt("interleave"));
  TF_ASSIGN_OR_RETURN(int64_t vec, config.GetInt("vec_load"));
  TF_ASSIGN_OR_RETURN(int64_t unroll_k, config.GetInt("unroll_k"));
  const int64_t M = dense->m(), N = dense->n(), K = dense->k();
  if (tile_m.size() != 3 || tile_n.size() != 3 || tile_k.size() != 2 ||
      tile_m[0] * tile_m[1] * tile_m[2] != M || tile_n[0] * tile_n[1] * tile_n[2] != N ||
      tile_k[0] * tile_k[1] != K) {
    return absl::InvalidArgumentError(
        absl::StrCat(kTemplateName, ": tile_m, tile_n and tile_k must split M, N and K exactly"));
  }
  const bool nk = dense->layout() == DenseWorkload::Layout::kNK;
  const int64_t ty = tile_m[1], tm = tile_m[2], tx = tile_n[1], tn = tile_n[2], bk = tile_k[1];
  const int64_t BM = ty * tm, BN = tx * tn;
  // vec_load loads `vec` consecutive elements along the panel's contiguous
  // dimension (K for A, and for B in layout NK; N for B in layout KN).
  const int64_t b_run = nk ? bk : BN;
  if (bk % vec != 0 || b_run % vec != 0) {
    return absl::InvalidArgumentError(absl::StrCat(kTemplateName, ": vec_load ", vec,
                                                   " must divide the staged panels' rows (bk=", bk,
                                                   ", ", nk ? "bk" : "BN", "=", b_run, ")"));
  }

  GpuBlockShape shape{.threads = {tx, ty, 1}};
  Expr bx = Var::Make("bx"), by = Var::Make("by");
  Expr row0 = by * BM, col0 = bx * BN;

  auto body = [&](Expr tyv, Expr txv) -> Stmt {
    Expr t = tyv * tx + txv;  // linear thread id for cooperative loads
    // Row i / column j of this thread's register tile within the block tile.
    auto row_of = [&](Expr i) { return interleave ? i * ty + tyv : tyv * tm + i; };
    auto col_of = [&](Expr j) { return interleave ? j * tx + txv : txv * tn + j; };

    Stmt init = Loop("i0", tm, ForKind::kUnrolled, [&](Expr i) {
      return Loop("j0", tn, ForKind::kUnrolled,
                  [&](Expr j) { return Store::Make("acc", 0.0, i * tn + j); });
    });

    auto k_step = [&](Expr ko) -> Stmt {
      // As[kk][r] = A[row0 + r][ko*bk + kk]: runs of `vec` along K.
      Stmt load_a = CooperativeLoad(shape, "la", BM * (bk / vec), t, [&](Expr e) {
        Expr r = e / (bk / vec), kk = (e % (bk / vec)) * vec;
        return Loop("va", vec, ForKind::kVectorized, [&](Expr v) {
          return Store::Make("As", Load::Make("A", (row0 + r) * K + ko * bk + kk + v),
                             (kk + v) * BM + r);
        });
      });
      Stmt load_b;
      if (nk) {  // Bs[kk][c] = B[col0 + c][ko*bk + kk]
        load_b = CooperativeLoad(shape, "lb", BN * (bk / vec), t, [&](Expr e) {
          Expr c = e / (bk / vec), kk = (e % (bk / vec)) * vec;
          return Loop("vb", vec, ForKind::kVectorized, [&](Expr v) {
            return Store::Make("Bs", Load::Make("B", (col0 + c) * K + ko * bk + kk + v),
                               (kk + v) * BN + c);
          });
        });
      } else {  // Bs[kk][c] = B[ko*bk + kk][col0 + c]
        load_b = CooperativeLoad(shape, "lb", bk * (BN / vec), t, [&](Expr e) {
          Expr kk = e / (BN / vec), c = (e % (BN / vec)) * vec;
          return Loop("vb", vec, ForKind::kVectorized, [&](Expr v) {
            return Store::Make("Bs", Load::Make("B", (ko * bk + kk) * N + col0 + c + v),
                               kk * BN + c + v);
          });
        });
      }
      Stmt compute = Loop("kk", bk, unroll_k ? ForKind::kUnrolled : ForKind::kSerial, [&](Expr kk) {
        return Loop("i", tm, ForKind::kUnrolled, [&](Expr i) {
          return Loop("j", tn, ForKind::kUnrolled, [&](Expr j) {
            Expr a = Load::Make("As", kk * BM + row_of(i));
            Expr b = Load::Make("Bs", kk * BN + col_of(j));
            return Store::Make("acc", Load::Make("acc", i * tn + j) + a * b, i * tn + j);
          });
        });
      });
      return Block::Make({load_a, load_b, Barrier::Make(), compute, Barrier::Make()});
    };
    Stmt reduction = Loop("ko", tile_k[0], ForKind::kSerial, k_step);
    Stmt store = Loop("i1", tm, ForKind::kUnrolled, [&](Expr i) {
      return Loop("j1", tn, ForKind::kUnrolled, [&](Expr j) {
        return Store::Make("C", Load::Make("acc", i * tn + j),
                           (row0 + row_of(i)) * N + col0 + col_of(j));
      });
    });
    return Allocate::Make("acc", tm * tn, MemoryScope::kStack,
                          Block::Make({init, reduction, store}));
  };

  Stmt threads = Loop("ty", ty, ForKind::kThreadIdxY, [&](Expr tyv) {
    return Loop("tx", tx, ForKind::kThreadIdxX, [&](Expr txv) { return body(tyv, txv); });
  });
  Stmt shared = Allocate::Make("As", bk * BM, MemoryScope::kShared,
                               Allocate::Make("Bs", bk * BN, MemoryScope::kShared, threads));
  // The tile's block indices are bound by lets so the body reads the same
  // whether or not a loop of extent 1 was elided.
  Stmt nest = Loop("block_y", tile_m[0], ForKind::kBlockIdxY, [&](Expr byv) {
    return Loop("block_x", tile_n[0], ForKind::kBlockIdxX, [&](Expr bxv) {
      return LetStmt::Make("by", byv, LetStmt::Make("bx", bxv, shared));
    });
  });

  return KernelFunc(DenseGpuCudaTemplate(), workload, nest);
}

const Template& DenseGpuCudaTemplate() {
  static const Template kTemplate(kNames, &DefineTemplateSpace, &InstantiateTemplate);
  return kTemplate;
}

}  // namespace tunefleet

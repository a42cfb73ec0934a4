#include "tuner_core/templates/gemm_cuda.h"

#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/templates/gpu_schedule.h"
#include "tuner_core/templates/loop_builder.h"

namespace tunefleet {

using namespace ir;  // NOLINT

namespace {

// A register-resident stage is unrolled; more rounds than this would index
// the staging registers with a loop variable and spill them to local memory.
constexpr int64_t kMaxStagedRounds = 8;

// The resolved knobs of one config.
struct GemmTiles {
  int64_t blocks_m, ty, tm, blocks_n, tx, tn, k_steps, bk;
  int64_t frag_m, frag_n;  // run lengths (divide tm and tn)
  int64_t vec_a, vec_b, pad, raster;
  bool double_buffer;
  int64_t BM() const { return ty * tm; }
  int64_t BN() const { return tx * tn; }
  int64_t threads() const { return tx * ty; }
};

// The widest vector (<= 4 floats) that splits a run of `run` elements.
int64_t VectorLanes(int64_t run) { return std::gcd<int64_t>(run, 4); }

[[nodiscard]] absl::StatusOr<GemmTiles> ResolveTiles(const GpuGemmSpec& spec, const Config& config,
                                                     const char* name) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> tile_m, config.GetSplit("tile_m"));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> tile_n, config.GetSplit("tile_n"));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> tile_k, config.GetSplit("tile_k"));
  TF_ASSIGN_OR_RETURN(int64_t frag_m, config.GetInt("frag_m"));
  TF_ASSIGN_OR_RETURN(int64_t frag_n, config.GetInt("frag_n"));
  TF_ASSIGN_OR_RETURN(int64_t vec, config.GetInt("vec_load"));
  TF_ASSIGN_OR_RETURN(int64_t pad, config.GetInt("pad"));
  TF_ASSIGN_OR_RETURN(int64_t double_buffer, config.GetInt("double_buffer"));
  TF_ASSIGN_OR_RETURN(int64_t raster, config.GetInt("raster"));
  if (tile_m.size() != 3 || tile_n.size() != 3 || tile_k.size() != 2 ||
      tile_m[0] * tile_m[1] * tile_m[2] != spec.m || tile_n[0] * tile_n[1] * tile_n[2] != spec.n ||
      tile_k[0] * tile_k[1] != spec.k) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": tile_m, tile_n and tile_k must split M, N and K exactly"));
  }
  GemmTiles t{.blocks_m = tile_m[0],
              .ty = tile_m[1],
              .tm = tile_m[2],
              .blocks_n = tile_n[0],
              .tx = tile_n[1],
              .tn = tile_n[2],
              .k_steps = tile_k[0],
              .bk = tile_k[1],
              // 0 = one run of all tm (tn) rows: contiguous.
              .frag_m = frag_m == 0 ? tile_m[2] : std::gcd(frag_m, tile_m[2]),
              .frag_n = frag_n == 0 ? tile_n[2] : std::gcd(frag_n, tile_n[2]),
              .vec_a = spec.a.vectorizable ? vec : 1,
              .vec_b = spec.b.vectorizable ? vec : 1,
              .pad = pad,
              .raster = std::gcd(raster, tile_m[0]),
              .double_buffer = double_buffer != 0};
  // A vector load covers `vec` consecutive elements of the staged panel's
  // contiguous dimension: bk for a k-contiguous operand, else BM (BN).
  auto check_vec = [&](const GpuGemmOperand& op, int64_t vec, int64_t outer, const char* which) {
    const int64_t run = op.k_contiguous ? t.bk : outer;
    if (run % vec != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": vec_load ", vec, " must divide operand ", which, "'s staged rows (",
                       op.k_contiguous ? "bk" : "the block tile", " = ", run, ")"));
    }
    return absl::OkStatus();
  };
  TF_RETURN_IF_ERROR(check_vec(spec.a, t.vec_a, t.BM(), "A"));
  TF_RETURN_IF_ERROR(check_vec(spec.b, t.vec_b, t.BN(), "B"));
  if (t.double_buffer) {
    for (auto [total, which] :
         {std::pair{t.BM() * t.bk / t.vec_a, "A"}, std::pair{t.BN() * t.bk / t.vec_b, "B"}}) {
      if (CeilDiv(total, t.threads()) > kMaxStagedRounds) {
        return absl::InvalidArgumentError(absl::StrCat(
            name, ": double_buffer stages operand ", which, " in ", CeilDiv(total, t.threads()),
            " loads per thread; at most ", kMaxStagedRounds, " stay in registers"));
      }
    }
  }
  return t;
}

}  // namespace

[[nodiscard]] absl::Status DefineGpuGemmSpace(const GpuGemmSpec& spec, ConfigSpace& space) {
  if (spec.m <= 0 || spec.n <= 0 || spec.k <= 0 || spec.batch <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("GPU GEMM of non-positive size ", spec.batch,
                                                   " x ", spec.m, " x ", spec.n, " x ", spec.k));
  }
  TF_RETURN_IF_ERROR(space.DefineSplit("tile_m", spec.m, GpuThreadSplit(32, 16)));
  TF_RETURN_IF_ERROR(space.DefineSplit("tile_n", spec.n, GpuThreadSplit(64, 16)));
  TF_RETURN_IF_ERROR(space.DefineSplit("tile_k", spec.k, {.max_factor = 32}));
  TF_RETURN_IF_ERROR(space.DefineKnob("frag_m", {4, 1, 0}));
  TF_RETURN_IF_ERROR(space.DefineKnob("frag_n", {4, 1, 0}));
  if (spec.a.vectorizable || spec.b.vectorizable) {
    TF_RETURN_IF_ERROR(space.DefineKnob("vec_load", {1, 2, 4}));
  } else {
    TF_RETURN_IF_ERROR(space.DefineKnob("vec_load", {1}));
  }
  TF_RETURN_IF_ERROR(space.DefineKnob("pad", {4, 0}));
  TF_RETURN_IF_ERROR(space.DefineKnob("double_buffer", {1, 0}));
  TF_RETURN_IF_ERROR(space.DefineKnob("raster", {1, 8}));
  return absl::OkStatus();
}

[[nodiscard]] absl::StatusOr<Stmt> GpuGemmNest(const GpuGemmSpec& spec, const Config& config,
                                               const char* template_name) {
  TF_ASSIGN_OR_RETURN(const GemmTiles t, ResolveTiles(spec, config, template_name));
  const int64_t BM = t.BM(), BN = t.BN(), bk = t.bk;
  const int64_t rows_a = BM + t.pad, rows_b = BN + t.pad;
  const int64_t stages = t.double_buffer ? 2 : 1;
  const GpuBlockShape shape{.threads = {t.tx, t.ty, 1}};
  Expr batch = Var::Make("gemm_b"), row0 = Var::Make("row0"), col0 = Var::Make("col0");

  // The element index e of a cooperative load as (outer, kk) of its vector:
  // threads walk the operand's contiguous index fastest.
  struct Slot {
    Expr outer, kk;
  };
  auto slot_of = [&](const GpuGemmOperand& op, int64_t outer, int64_t vec, Expr e) -> Slot {
    if (op.k_contiguous) return {e / (bk / vec), (e % (bk / vec)) * vec};
    return {(e % (outer / vec)) * vec, e / (outer / vec)};
  };
  // Lane v of a vector load: along k or along the outer index.
  auto lane = [](const GpuGemmOperand& op, Slot s, Expr v) -> Slot {
    if (op.k_contiguous) return {s.outer, s.kk + v};
    return {s.outer + v, s.kk};
  };

  auto body = [&](Expr tyv, Expr txv) -> Stmt {
    Expr tid = tyv * t.tx + txv;
    // A thread's rows (columns) lie in runs of frag_m (frag_n) consecutive
    // rows, the runs of the threads interleaved: run r of thread tyv starts
    // at row (r * ty + tyv) * frag_m. runs(...) walks them as (register
    // index, block-tile position) with `lanes` consecutive values vectorized,
    // written without division so that the lanes form one vector access.
    auto runs = [&](const std::string& name, int64_t count, int64_t run, int64_t threads,
                    Expr thread, int64_t lanes, const std::function<Stmt(Expr, Expr)>& fn) {
      return Loop(name + "_r", count / run, ForKind::kUnrolled, [&](Expr r) {
        return Loop(name + "_q", run / lanes, ForKind::kUnrolled, [&](Expr q) {
          return Loop(name + "_v", lanes, ForKind::kVectorized, [&](Expr v) {
            Expr offset = q * lanes + v;
            return fn(r * run + offset, (r * threads + thread) * run + offset);
          });
        });
      });
    };

    // Every thread runs fn(round, e) for e = round * threads + tid covering
    // [0, total) once, the rounds unrolled when `unrolled` (the staging
    // registers are then indexed by constants and stay registers).
    auto rounds = [&](const std::string& name, int64_t total, bool unrolled,
                      const std::function<Stmt(Expr, Expr)>& fn) {
      const int64_t count = t.threads();
      if (!unrolled)
        return CooperativeLoad(shape, name, total, tid, [&](Expr e) { return fn(Expr(), e); });
      return Loop(name, CeilDiv(total, count), ForKind::kUnrolled, [&](Expr l) {
        Expr e = l * count + tid;
        if (total % count == 0) return fn(l, e);
        return IfThenElse::Make(e < total, fn(l, e));
      });
    };
    // One operand's K step `ko`, global -> sink(round, v, slot, value) for
    // each lane v of each vector load.
    auto stage_operand = [&](const GpuGemmOperand& op, const std::string& name, int64_t outer,
                             int64_t vec, Expr origin, Expr ko, bool unrolled,
                             const std::function<Stmt(Expr, Expr, Slot, Expr)>& sink) {
      return rounds(name, outer * bk / vec, unrolled, [&](Expr l, Expr e) {
        Slot s = slot_of(op, outer, vec, e);
        return Loop(name + "_v", vec, ForKind::kVectorized, [&](Expr v) {
          Slot ln = lane(op, s, v);
          return sink(l, v, ln, op.element(batch, origin + ln.outer, ko * bk + ln.kk));
        });
      });
    };
    auto to_shared = [&](const char* smem, int64_t row, Expr stage) {
      return [=](Expr, Expr, Slot ln, Expr value) {
        return Store::Make(smem, value, (stage * bk + ln.kk) * row + ln.outer);
      };
    };
    auto to_registers = [&](const char* regs, int64_t vec) {
      return
          [=](Expr l, Expr v, Slot, Expr value) { return Store::Make(regs, value, l * vec + v); };
    };
    auto registers_to_shared = [&](const GpuGemmOperand& op, const std::string& name,
                                   const char* regs, const char* smem, int64_t outer, int64_t vec,
                                   int64_t row, Expr stage) {
      return rounds(name, outer * bk / vec, true, [&](Expr l, Expr e) {
        Slot s = slot_of(op, outer, vec, e);
        return Loop(name + "_v", vec, ForKind::kVectorized, [&](Expr v) {
          Slot ln = lane(op, s, v);
          return Store::Make(smem, Load::Make(regs, l * vec + v),
                             (stage * bk + ln.kk) * row + ln.outer);
        });
      });
    };

    // One K step's arithmetic on shared stage `stage`: fragments of each kk
    // into registers, then the outer product into the accumulators.
    auto compute = [&](Expr stage) -> Stmt {
      return Loop("kk", bk, ForKind::kUnrolled, [&](Expr kk) {
        auto fragment = [&](const char* frag, const char* smem, int64_t count, int64_t run,
                            int64_t threads, Expr thread, int64_t row) {
          return runs(
              frag, count, run, threads, thread, VectorLanes(run), [&](Expr i, Expr position) {
                return Store::Make(frag, Load::Make(smem, (stage * bk + kk) * row + position), i);
              });
        };
        Stmt load_a = fragment("fa", "As", t.tm, t.frag_m, t.ty, tyv, rows_a);
        Stmt load_b = fragment("fb", "Bs", t.tn, t.frag_n, t.tx, txv, rows_b);
        Stmt fma = Loop("i", t.tm, ForKind::kUnrolled, [&](Expr i) {
          return Loop("j", t.tn, ForKind::kUnrolled, [&](Expr j) {
            Expr idx = i * t.tn + j;
            return Store::Make(
                "acc", Load::Make("acc", idx) + Load::Make("fa", i) * Load::Make("fb", j), idx);
          });
        });
        return Block::Make({load_a, load_b, fma});
      });
    };

    Stmt init = Loop("i0", t.tm * t.tn, ForKind::kUnrolled,
                     [&](Expr i) { return Store::Make("acc", 0.0, i); });
    Stmt reduction;
    if (!t.double_buffer) {
      reduction = Loop("ko", t.k_steps, ForKind::kSerial, [&](Expr ko) {
        Expr zero = IntImm::Make(0);
        return Block::Make({stage_operand(spec.a, "la", BM, t.vec_a, row0, ko, false,
                                          to_shared("As", rows_a, zero)),
                            stage_operand(spec.b, "lb", BN, t.vec_b, col0, ko, false,
                                          to_shared("Bs", rows_b, zero)),
                            Barrier::Make(), compute(zero), Barrier::Make()});
      });
    } else {
      // Stage 0 holds step 0; step ko computes on stage ko % 2 while step
      // ko + 1 travels global -> registers -> the other stage. Every thread
      // passed the previous step's barrier, so no one still reads that stage.
      Expr zero = IntImm::Make(0);
      Stmt prologue = Block::Make({stage_operand(spec.a, "la", BM, t.vec_a, row0, zero, false,
                                                 to_shared("As", rows_a, zero)),
                                   stage_operand(spec.b, "lb", BN, t.vec_b, col0, zero, false,
                                                 to_shared("Bs", rows_b, zero)),
                                   Barrier::Make()});
      Stmt steps = Loop("ko", t.k_steps, ForKind::kSerial, [&](Expr ko) {
        Expr next = ko + 1, next_stage = (ko + 1) % 2;
        Stmt fetch = IfThenElse::Make(
            next < t.k_steps, Block::Make({stage_operand(spec.a, "ga", BM, t.vec_a, row0, next,
                                                         true, to_registers("ra", t.vec_a)),
                                           stage_operand(spec.b, "gb", BN, t.vec_b, col0, next,
                                                         true, to_registers("rb", t.vec_b))}));
        Stmt publish = IfThenElse::Make(
            next < t.k_steps,
            Block::Make(
                {registers_to_shared(spec.a, "sa", "ra", "As", BM, t.vec_a, rows_a, next_stage),
                 registers_to_shared(spec.b, "sb", "rb", "Bs", BN, t.vec_b, rows_b, next_stage)}));
        return Block::Make({fetch, compute(ko % 2), publish, Barrier::Make()});
      });
      const int64_t regs_a = CeilDiv(BM * bk / t.vec_a, t.threads()) * t.vec_a;
      const int64_t regs_b = CeilDiv(BN * bk / t.vec_b, t.threads()) * t.vec_b;
      reduction = Allocate::Make(
          "ra", regs_a, MemoryScope::kStack,
          Allocate::Make("rb", regs_b, MemoryScope::kStack, Block::Make({prologue, steps})));
    }
    // Runs of frag_n columns are contiguous in C: one vector store each where
    // the output allows it.
    const int64_t store_lanes = spec.store_vectorizable ? VectorLanes(t.frag_n) : 1;
    Stmt store = runs("i1", t.tm, t.frag_m, t.ty, tyv, 1, [&](Expr i, Expr row) {
      return runs("j1", t.tn, t.frag_n, t.tx, txv, store_lanes, [&](Expr j, Expr col) {
        return spec.store(batch, row0 + row, col0 + col, Load::Make("acc", i * t.tn + j));
      });
    });
    return Allocate::Make("acc", t.tm * t.tn, MemoryScope::kStack,
                          Allocate::Make("fa", t.tm, MemoryScope::kStack,
                                         Allocate::Make("fb", t.tn, MemoryScope::kStack,
                                                        Block::Make({init, reduction, store}))));
  };

  Stmt threads = Loop("ty", t.ty, ForKind::kThreadIdxY, [&](Expr tyv) {
    return Loop("tx", t.tx, ForKind::kThreadIdxX, [&](Expr txv) { return body(tyv, txv); });
  });
  Stmt shared =
      Allocate::Make("As", stages * bk * rows_a, MemoryScope::kShared,
                     Allocate::Make("Bs", stages * bk * rows_b, MemoryScope::kShared, threads));
  // Blocks in groups of `raster` block rows, each group walked column by
  // column; the tile's origin is bound by lets so the body reads the same
  // whether or not a loop of extent 1 was elided.
  const int64_t group = t.raster * t.blocks_n;
  Stmt nest = Loop("gemm_batch", spec.batch, ForKind::kBlockIdxZ, [&](Expr bz) {
    return Loop("block", t.blocks_m * t.blocks_n, ForKind::kBlockIdxX, [&](Expr bid) {
      Expr local = bid % group;
      Expr by = (bid / group) * t.raster + local % t.raster, bx = local / t.raster;
      return LetStmt::Make("gemm_b", bz,
                           LetStmt::Make("row0", by * BM, LetStmt::Make("col0", bx * BN, shared)));
    });
  });
  return nest;
}

}  // namespace tunefleet

#include "tuner_core/templates/gemm_pack.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/ir/final_store.h"
#include "tuner_core/templates/loop_builder.h"

namespace tunefleet {
namespace {

using namespace ir;  // NOLINT

using Params = GemmPackParams;

constexpr int64_t kFloatsPerLine = 16;  // a 64-byte cache line

// Register-tile loops: MR rows (unrolled) x NR columns as NR/vec vectors.
Stmt TileLoops(const Params& p, const std::string& suffix,
               const std::function<Stmt(Expr, Expr)>& body) {
  return RegisterTileLoops(suffix, p.MR, p.NR, p.vec, body);
}

// Splits the parallel index `t` of a loop over batch x `inner` into the
// batch item and the inner index (no arithmetic when there is one item).
std::pair<Expr, Expr> SplitBatch(const Params& p, Expr t, int64_t inner) {
  if (p.batch == 1) return {Expr(0), t};
  return {t / inner, t % inner};
}

// base + index, without the addition for a single batch item.
Expr Offset(const Params& p, Expr base, Expr index) { return p.batch == 1 ? index : base + index; }

// Packs B into Bp[b][np][k][NR] (zero rows past N).
Stmt PackB(const Params& p) {
  const int64_t NP = CeilDiv(p.N, p.NR);
  auto [bt, np] = SplitBatch(p, Var::Make("pb_np"), NP);
  auto load_b = [&](Expr index) { return Load::Make("B", Offset(p, bt * (p.N * p.K), index)); };
  auto store_bp = [&](Expr value, Expr index) {
    return Store::Make("Bp", value, Offset(p, bt * (NP * p.K * p.NR), index));
  };
  Stmt body;
  if (p.b_is_nk) {
    // B[n, k]: copy row n (contiguous in k) into column j of the panel.
    body = Loop("pb_j", p.NR, ForKind::kSerial, [&](Expr j) {
      Expr n = np * p.NR + j;
      Stmt copy = Loop("pb_k", p.K, ForKind::kSerial, [&](Expr k) {
        return store_bp(load_b(n * p.K + k), (np * p.K + k) * p.NR + j);
      });
      Stmt zero = Loop("pb_kz", p.K, ForKind::kSerial,
                       [&](Expr k) { return store_bp(0.0, (np * p.K + k) * p.NR + j); });
      return p.N % p.NR == 0 ? copy : IfThenElse::Make(n < p.N, copy, zero);
    });
  } else {
    // B[k, n]: each k row of the panel is NR contiguous floats.
    Stmt full = Loop("pb_k", p.K, ForKind::kSerial, [&](Expr k) {
      return Loop("pb_jv", p.nr_vecs, ForKind::kUnrolled, [&](Expr jv) {
        return Loop("pb_jl", p.vec, ForKind::kVectorized, [&](Expr jl) {
          Expr j = jv * p.vec + jl;
          return store_bp(load_b(k * p.N + np * p.NR + j), (np * p.K + k) * p.NR + j);
        });
      });
    });
    Stmt edge = Loop("pb_ke", p.K, ForKind::kSerial, [&](Expr k) {
      return Loop("pb_je", p.NR, ForKind::kSerial, [&](Expr j) {
        Expr n = np * p.NR + j;
        return store_bp(Select::Make(n < p.N, load_b(k * p.N + Min(n, p.N - 1)), 0.0),
                        (np * p.K + k) * p.NR + j);
      });
    });
    body = p.N % p.NR == 0 ? full : IfThenElse::Make(np * p.NR + p.NR <= p.N, full, edge);
  }
  return For::Make("pb_np", 0, p.batch * NP, ForKind::kParallel, body);
}

// Packs A into Ap[b][mp][k][MR] (zero rows past M).
Stmt PackA(const Params& p) {
  const int64_t MP = CeilDiv(p.M, p.MR);
  auto [bt, mp] = SplitBatch(p, Var::Make("pa_mp"), MP);
  auto store_ap = [&](Expr value, Expr index) {
    return Store::Make("Ap", value, Offset(p, bt * (MP * p.K * p.MR), index));
  };
  Stmt body = Loop("pa_i", p.MR, ForKind::kSerial, [&](Expr i) {
    Expr m = mp * p.MR + i;
    Stmt copy = Loop("pa_k", p.K, ForKind::kSerial, [&](Expr k) {
      return store_ap(Load::Make("A", Offset(p, bt * (p.M * p.K), m * p.K + k)),
                      (mp * p.K + k) * p.MR + i);
    });
    Stmt zero = Loop("pa_kz", p.K, ForKind::kSerial,
                     [&](Expr k) { return store_ap(0.0, (mp * p.K + k) * p.MR + i); });
    return p.M % p.MR == 0 ? copy : IfThenElse::Make(m < p.M, copy, zero);
  });
  return For::Make("pa_mp", 0, p.batch * MP, ForKind::kParallel, body);
}

// One MR x NR tile of C at panels (mp, np) of batch item bt, accumulating k
// in [k0, k0+klen).
Stmt MicroKernel(const Params& p, Expr bt, Expr mp, Expr np, Expr kb, Expr k0, Expr klen) {
  const int64_t MP = CeilDiv(p.M, p.MR), NP = CeilDiv(p.N, p.NR);
  auto acc_index = [&](Expr i, Expr j) { return i * p.NR + j; };
  auto c_index = [&](Expr i, Expr j) {
    return Offset(p, bt * (p.M * p.N), (mp * p.MR + i) * p.N + np * p.NR + j);
  };

  // Initialise the accumulators: zero for the first K block, C after.
  Stmt zero =
      TileLoops(p, "_z", [&](Expr i, Expr j) { return Store::Make("acc", 0.0, acc_index(i, j)); });
  Stmt load_full = TileLoops(p, "_l", [&](Expr i, Expr j) {
    return Store::Make("acc", Load::Make("C", c_index(i, j)), acc_index(i, j));
  });
  // C's last write is the last K block's (where a compiled model's
  // epilogue can be computed: its bias indexed by C's column).
  const int64_t num_k_blocks = CeilDiv(p.K, p.KC);
  Expr last_block = num_k_blocks > 1 ? Expr(EQ(kb, num_k_blocks - 1)) : Expr();
  auto store_tile = [&](Expr i, Expr j) {
    return FinalStore("C", Load::Make("acc", acc_index(i, j)), c_index(i, j), np * p.NR + j,
                      last_block);
  };
  Stmt store_full = TileLoops(p, "_s", store_tile);
  // Edge tiles: scalar, guarded, never touching C outside [M) x [N).
  auto edge_loops = [&](const std::string& suffix, const std::function<Stmt(Expr, Expr)>& body) {
    return Loop("ie" + suffix, p.MR, ForKind::kSerial, [&](Expr i) {
      return Loop("je" + suffix, p.NR, ForKind::kSerial, [&](Expr j) {
        return IfThenElse::Make(mp * p.MR + i < p.M && np * p.NR + j < p.N, body(i, j));
      });
    });
  };
  Stmt load_edge = edge_loops("_l", [&](Expr i, Expr j) {
    return Store::Make("acc", Load::Make("C", c_index(i, j)), acc_index(i, j));
  });
  Stmt store_edge = edge_loops("_s", store_tile);
  const bool may_be_edge = p.M % p.MR != 0 || p.N % p.NR != 0;
  Expr full_tile = mp * p.MR + p.MR <= p.M && np * p.NR + p.NR <= p.N;
  Stmt load_c = may_be_edge ? IfThenElse::Make(full_tile, load_full, load_edge) : load_full;
  Stmt store_c = may_be_edge ? IfThenElse::Make(full_tile, store_full, store_edge) : store_full;
  // With one K block the first branch is the only one: skip the test.
  Stmt init = num_k_blocks == 1 ? zero : IfThenElse::Make(EQ(kb, 0), zero, load_c);

  // Prefetches: `lines` cache lines (16 floats each) of `buffer` from `index`.
  auto prefetch_lines = [&](const std::string& name, const std::string& buffer, Expr index,
                            int64_t lines) {
    return Loop(name, lines, ForKind::kUnrolled,
                [&](Expr line) { return Prefetch::Make(buffer, index + line * kFloatsPerLine); });
  };
  const int64_t lines_per_row = CeilDiv(p.NR, kFloatsPerLine);

  // The FMA step for one k, after the prefetch of the B row prefetch_b steps on.
  auto step = [&](Expr k, const std::string& suffix) {
    Stmt prefetch_b;
    if (p.prefetch_b > 0) {
      prefetch_b = prefetch_lines(
          "pbl" + suffix, "Bp",
          Offset(p, bt * (NP * p.K * p.NR), (np * p.K + k + p.prefetch_b) * p.NR), lines_per_row);
    }
    return Block::Make(
        {prefetch_b, TileLoops(p, suffix, [&](Expr i, Expr j) {
           Expr a =
               p.pack_a
                   ? Load::Make("Ap", Offset(p, bt * (MP * p.K * p.MR), (mp * p.K + k) * p.MR + i))
                   : Load::Make("A",
                                Offset(p, bt * (p.M * p.K), Min(mp * p.MR + i, p.M - 1) * p.K + k));
           Expr b = Load::Make("Bp", Offset(p, bt * (NP * p.K * p.NR), (np * p.K + k) * p.NR + j));
           return Store::Make("acc", Load::Make("acc", acc_index(i, j)) + a * b, acc_index(i, j));
         })});
  };
  Expr ko = Var::Make("ko");
  Stmt main_loop = For::Make("ko", 0, klen / p.unroll_k, ForKind::kSerial,
                             Loop("ku", p.unroll_k, ForKind::kUnrolled,
                                  [&](Expr ku) { return step(k0 + ko * p.unroll_k + ku, "_m"); }));
  Stmt tail;
  if (p.unroll_k > 1) {
    Expr kt = Var::Make("kt");
    tail = For::Make("kt", 0, klen % p.unroll_k, ForKind::kSerial,
                     step(k0 + (klen / p.unroll_k) * p.unroll_k + kt, "_t"));
  }
  // The tile is final once the last K block is stored.
  Expr rows = p.M % p.MR == 0 ? Expr(p.MR) : Min(Expr(p.MR), p.M - mp * p.MR);
  Expr cols = p.N % p.NR == 0 ? Expr(p.NR) : Min(Expr(p.NR), p.N - np * p.NR);
  Stmt ready = OutputReady::Make("C", c_index(0, 0), rows, cols, p.N);
  if (num_k_blocks > 1) ready = IfThenElse::Make(EQ(kb, num_k_blocks - 1), ready);
  return Block::Make({Allocate::Make("acc", p.MR * p.NR, MemoryScope::kStack,
                                     Block::Make({init, main_loop, tail, store_c})),
                      ready});
}

Stmt Compute(const Params& p) {
  const int64_t MP = CeilDiv(p.M, p.MR), NP = CeilDiv(p.N, p.NR);
  const int64_t MB = CeilDiv(MP, p.mc_panels), NB = CeilDiv(NP, p.nc_panels);
  const int64_t num_k_blocks = CeilDiv(p.K, p.KC);
  auto [bt, t] = SplitBatch(p, Var::Make("blk"), MB * NB);
  Expr mb = p.fuse_mn ? t / NB : t % MB;
  Expr nb = p.fuse_mn ? t % NB : t / MB;
  Stmt body = Loop("kb", num_k_blocks, ForKind::kSerial, [&](Expr kb) {
    Expr k0 = kb * p.KC;
    Expr klen = num_k_blocks == 1 ? Expr(p.K) : Min(Expr(p.KC), p.K - k0);
    auto tile = [&](Expr pn, Expr pm) {
      Expr np = nb * p.nc_panels + pn, mp = mb * p.mc_panels + pm;
      Stmt kernel = MicroKernel(p, bt, mp, np, kb, k0, klen);
      const bool m_ragged = MP % p.mc_panels != 0, n_ragged = NP % p.nc_panels != 0;
      if (m_ragged && n_ragged) return IfThenElse::Make(mp < MP && np < NP, kernel);
      if (m_ragged) return IfThenElse::Make(mp < MP, kernel);
      if (n_ragged) return IfThenElse::Make(np < NP, kernel);
      return kernel;
    };
    if (p.b_panel_outer) {
      return Loop("pn", p.nc_panels, ForKind::kSerial, [&](Expr pn) {
        return Loop("pm", p.mc_panels, ForKind::kSerial, [&](Expr pm) { return tile(pn, pm); });
      });
    }
    return Loop("pm", p.mc_panels, ForKind::kSerial, [&](Expr pm) {
      return Loop("pn", p.nc_panels, ForKind::kSerial, [&](Expr pn) { return tile(pn, pm); });
    });
  });
  return For::Make("blk", 0, p.batch * MB * NB, ForKind::kParallel, body);
}

// The "dot" kernel (layout NK, one batch item): no packing at all. A tile
// of MR rows of A by R = nr_vecs rows of B keeps MR x R vector accumulators
// of k (each A and B row read with unit stride); at the end each output is
// the sum of its accumulator's lanes plus the k tail. B is streamed once per
// M block, which is all that matters when M is small.
Stmt DotKernel(const Params& p) {
  const int64_t rows_b = p.nr_vecs;
  const int64_t MP = CeilDiv(p.M, p.MR), NP = CeilDiv(p.N, rows_b);
  const int64_t MB = CeilDiv(MP, p.mc_panels), NB = CeilDiv(NP, p.nc_panels);
  const int64_t step = p.vec * p.unroll_k;
  const int64_t main_steps = p.K / step, rest_vecs = (p.K % step) / p.vec;
  const int64_t k_vec_end = main_steps * step + rest_vecs * p.vec;
  Expr t = Var::Make("blk");
  Expr mb = p.fuse_mn ? t / NB : t % MB;
  Expr nb = p.fuse_mn ? t % NB : t / MB;
  auto tile = [&](Expr mp, Expr np) {
    // Rows past M or N read the last row again; their sums are not stored.
    auto a_row = [&](Expr i) { return Min(mp * p.MR + i, Expr(p.M - 1)) * p.K; };
    auto b_row = [&](Expr j) { return Min(np * rows_b + j, Expr(p.N - 1)) * p.K; };
    auto acc_index = [&](Expr i, Expr j, Expr l) { return (i * rows_b + j) * p.vec + l; };
    auto tile_loops = [&](const std::string& suffix,
                          const std::function<Stmt(Expr, Expr, Expr)>& body) {
      return Loop("di" + suffix, p.MR, ForKind::kUnrolled, [&](Expr i) {
        return Loop("dj" + suffix, rows_b, ForKind::kUnrolled, [&](Expr j) {
          return Loop("dl" + suffix, p.vec, ForKind::kVectorized,
                      [&](Expr l) { return body(i, j, l); });
        });
      });
    };
    Stmt zero = tile_loops(
        "_z", [&](Expr i, Expr j, Expr l) { return Store::Make("acc", 0.0, acc_index(i, j, l)); });
    auto step_at = [&](Expr k0, const std::string& suffix) {
      return tile_loops(suffix, [&](Expr i, Expr j, Expr l) {
        Expr a = Load::Make("A", a_row(i) + k0 + l);
        Expr b = Load::Make("B", b_row(j) + k0 + l);
        return Store::Make("acc", Load::Make("acc", acc_index(i, j, l)) + a * b,
                           acc_index(i, j, l));
      });
    };
    Expr ko = Var::Make("dko");
    Stmt main_loop = main_steps == 0
                         ? Stmt()
                         : For::Make("dko", 0, main_steps, ForKind::kSerial,
                                     Loop("dku", p.unroll_k, ForKind::kUnrolled, [&](Expr ku) {
                                       return step_at((ko * p.unroll_k + ku) * p.vec, "_m");
                                     }));
    Stmt rest = Loop("dkr", rest_vecs, ForKind::kSerial, [&](Expr kr) {
      return step_at((main_steps * p.unroll_k + kr) * p.vec, "_r");
    });
    Stmt reduce = Loop("dri", p.MR, ForKind::kUnrolled, [&](Expr i) {
      return Loop("drj", rows_b, ForKind::kUnrolled, [&](Expr j) {
        // Lanes summed pairwise (a shallow tree), then the k tail.
        std::vector<Expr> terms;
        for (int64_t l = 0; l < p.vec; ++l) terms.push_back(Load::Make("acc", acc_index(i, j, l)));
        while (terms.size() > 1) {
          std::vector<Expr> next;
          for (size_t e = 0; e + 1 < terms.size(); e += 2) next.push_back(terms[e] + terms[e + 1]);
          if (terms.size() % 2 == 1) next.push_back(terms.back());
          terms = std::move(next);
        }
        Expr sum = terms[0];
        for (int64_t k = k_vec_end; k < p.K; ++k) {
          sum = sum + Load::Make("A", a_row(i) + k) * Load::Make("B", b_row(j) + k);
        }
        Expr m = mp * p.MR + i, n = np * rows_b + j;
        Stmt store = FinalStore("C", sum, m * p.N + n, n);
        if (p.M % p.MR == 0 && p.N % rows_b == 0) return store;
        return IfThenElse::Make(m < p.M && n < p.N, store);
      });
    });
    Stmt kernel = Allocate::Make("acc", p.MR * rows_b * p.vec, MemoryScope::kStack,
                                 Block::Make({zero, main_loop, rest, reduce}));
    const bool m_ragged = MP % p.mc_panels != 0, n_ragged = NP % p.nc_panels != 0;
    if (m_ragged && n_ragged) return IfThenElse::Make(mp < MP && np < NP, kernel);
    if (m_ragged) return IfThenElse::Make(mp < MP, kernel);
    if (n_ragged) return IfThenElse::Make(np < NP, kernel);
    return kernel;
  };
  auto panel = [&](Expr pm, Expr pn) { return tile(mb * p.mc_panels + pm, nb * p.nc_panels + pn); };
  Stmt body = p.b_panel_outer ? Loop("pn", p.nc_panels, ForKind::kSerial,
                                     [&](Expr pn) {
                                       return Loop("pm", p.mc_panels, ForKind::kSerial,
                                                   [&](Expr pm) { return panel(pm, pn); });
                                     })
                              : Loop("pm", p.mc_panels, ForKind::kSerial, [&](Expr pm) {
                                  return Loop("pn", p.nc_panels, ForKind::kSerial,
                                              [&](Expr pn) { return panel(pm, pn); });
                                });
  // The task's block of C is final at its end (a dot tile is a few
  // columns: one call per task, not per tile).
  Expr m0 = mb * (p.mc_panels * p.MR), n0 = nb * (p.nc_panels * rows_b);
  Expr rows = Min(Expr(p.mc_panels * p.MR), p.M - m0);
  Expr cols = Min(Expr(p.nc_panels * rows_b), p.N - n0);
  body = Block::Make({body, OutputReady::Make("C", m0 * p.N + n0, rows, cols, p.N)});
  return For::Make("blk", 0, MB * NB, ForKind::kParallel, body);
}

// Candidates <= limit, plus limit itself when it is not already there.
std::vector<int64_t> CappedCandidates(std::vector<int64_t> values, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t v : values) {
    if (v < limit) out.push_back(v);
  }
  out.push_back(limit);
  return out;
}

// The knobs of DefineGemmPackSpace, with `mr` taking `mr_candidates`.
[[nodiscard]] absl::Status DefinePanelKnobs(int64_t k, std::vector<int64_t> mr_candidates,
                                            ConfigSpace* space) {
  TF_RETURN_IF_ERROR(space->DefineKnob("vec", std::vector<int64_t>{4, 8, 16}));
  TF_RETURN_IF_ERROR(space->DefineKnob("nr_vecs", std::vector<int64_t>{1, 2, 3, 4}));
  TF_RETURN_IF_ERROR(space->DefineKnob("mr", std::move(mr_candidates)));
  const int64_t k_limit = std::min<int64_t>(k, 2048);
  TF_RETURN_IF_ERROR(
      space->DefineKnob("kc", CappedCandidates({64, 128, 256, 384, 512, 768, 1024}, k_limit)));
  TF_RETURN_IF_ERROR(space->DefineKnob("mc_panels", std::vector<int64_t>{1, 2, 4, 8, 16, 32}));
  TF_RETURN_IF_ERROR(space->DefineKnob("nc_panels", std::vector<int64_t>{1, 2, 4, 8, 16, 32}));
  TF_RETURN_IF_ERROR(space->DefineKnob("unroll_k", std::vector<int64_t>{1, 2, 4, 8}));
  TF_RETURN_IF_ERROR(space->DefineKnob("pack_a", std::vector<int64_t>{0, 1}));
  TF_RETURN_IF_ERROR(space->DefineKnob("order", std::vector<std::string>{"nm", "mn"}));
  TF_RETURN_IF_ERROR(space->DefineKnob("fuse", std::vector<std::string>{"mn", "nm"}));
  return absl::OkStatus();
}

// The prefetch knob, defined after every other knob of a space (see
// DefineAddedKnob): its first choice, no prefetch, is the kernel before it.
// Two distances only: on Zen 4 every distance (8-32) and a prefetch of the C
// tile measured within noise of none at 512^3 (tunefleet measure, 24
// variants of the 3 best configs), and each value multiplies the space.
[[nodiscard]] absl::Status DefinePrefetchKnobs(ConfigSpace* space) {
  return space->DefineAddedKnob("prefetch_b", {0, 16});
}

[[nodiscard]] absl::StatusOr<Params> ParamsFromConfig(const GemmShape& shape,
                                                      const Config& config) {
  Params p;
  p.batch = shape.batch;
  p.M = shape.m;
  p.N = shape.n;
  p.K = shape.k;
  p.b_is_nk = shape.b_is_nk;
  TF_ASSIGN_OR_RETURN(p.vec, config.GetInt("vec"));
  TF_ASSIGN_OR_RETURN(p.nr_vecs, config.GetInt("nr_vecs"));
  TF_ASSIGN_OR_RETURN(p.MR, config.GetInt("mr"));
  TF_ASSIGN_OR_RETURN(p.KC, config.GetInt("kc"));
  TF_ASSIGN_OR_RETURN(p.mc_panels, config.GetInt("mc_panels"));
  TF_ASSIGN_OR_RETURN(p.nc_panels, config.GetInt("nc_panels"));
  TF_ASSIGN_OR_RETURN(p.unroll_k, config.GetInt("unroll_k"));
  TF_ASSIGN_OR_RETURN(int64_t pack_a, config.GetInt("pack_a"));
  TF_ASSIGN_OR_RETURN(std::string order, config.GetString("order"));
  TF_ASSIGN_OR_RETURN(std::string fuse, config.GetString("fuse"));
  TF_ASSIGN_OR_RETURN(p.prefetch_b, config.GetInt("prefetch_b"));
  p.NR = p.vec * p.nr_vecs;
  p.KC = std::min(p.KC, p.K);
  p.pack_a = pack_a != 0;
  p.b_panel_outer = order == "nm";
  p.fuse_mn = fuse == "mn";
  // A register tile that cannot fit in registers spills on every k step;
  // beyond 4x the register file it is not worth compiling at all.
  if (p.MR * p.nr_vecs > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("register tile ", p.MR, "x", p.NR, " is too large"));
  }
  return p;
}

// The timed body of the panel kernel: A packed when asked, then the blocks;
// B packed here too unless it was packed once before the timed calls.
Stmt PanelBody(const Params& p) {
  const int64_t MP = CeilDiv(p.M, p.MR);
  Stmt body = Compute(p);
  if (p.pack_a) {
    body = Allocate::Make("Ap", p.batch * MP * p.MR * p.K, MemoryScope::kGlobal,
                          Block::Make({PackA(p), body}));
  }
  return body;
}

int64_t PackedBElements(const Params& p) { return p.batch * CeilDiv(p.N, p.NR) * p.NR * p.K; }

}  // namespace

[[nodiscard]] absl::Status DefineGemmPackSpace(int64_t k, ConfigSpace* space) {
  TF_RETURN_IF_ERROR(DefinePanelKnobs(k, {1, 2, 3, 4, 5, 6, 8}, space));
  return DefinePrefetchKnobs(space);
}

[[nodiscard]] absl::StatusOr<RegisterDemand> GemmRegisterDemand(const Workload& /*workload*/,
                                                                const Config& config) {
  RegisterDemand demand;
  TF_ASSIGN_OR_RETURN(demand.lanes, config.GetInt("vec"));
  TF_ASSIGN_OR_RETURN(const int64_t nr_vecs, config.GetInt("nr_vecs"));
  TF_ASSIGN_OR_RETURN(const int64_t mr, config.GetInt("mr"));
  // Only the dense space of layout NK has the knob (NotFound elsewhere):
  // every other config is a panel kernel.
  const absl::StatusOr<std::string> kernel = config.GetString("kernel");
  const bool dot = kernel.ok() && *kernel == "dot";
  demand.accumulators = mr * nr_vecs;
  if (dot) {
    demand.vector_operands = mr + nr_vecs;
  } else {
    demand.vector_operands = nr_vecs;
    demand.broadcast_operands = 1;
  }
  return demand;
}

[[nodiscard]] absl::StatusOr<ir::Stmt> BuildPackedGemm(const GemmShape& shape,
                                                       const Config& config) {
  TF_ASSIGN_OR_RETURN(Params p, ParamsFromConfig(shape, config));
  return Allocate::Make("Bp", PackedBElements(p), MemoryScope::kGlobal,
                        Block::Make({PackB(p), PanelBody(p)}));
}

[[nodiscard]] absl::Status DefineDenseGemmSpace(int64_t k, bool b_is_nk, ConfigSpace* space) {
  TF_RETURN_IF_ERROR(DefinePanelKnobs(k, {1, 2, 3, 4, 5, 6, 8, 12, 14, 16}, space));
  TF_RETURN_IF_ERROR(space->DefineKnob("pack_b", std::vector<std::string>{"call", "once"}));
  if (b_is_nk) {
    TF_RETURN_IF_ERROR(space->DefineKnob("kernel", std::vector<std::string>{"panel", "dot"}));
  }
  TF_RETURN_IF_ERROR(DefinePrefetchKnobs(space));
  if (!b_is_nk) return absl::OkStatus();
  // The dot kernel packs nothing, blocks no k and prefetches nothing.
  return space->DeclareInert("kernel", "dot", {"kc", "pack_a", "pack_b", "prefetch_b"});
}

[[nodiscard]] absl::StatusOr<PackedGemmKernel> BuildDenseGemm(const GemmShape& shape,
                                                              const Config& config) {
  if (shape.batch != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the dense GEMM takes one batch item, not ", shape.batch));
  }
  TF_ASSIGN_OR_RETURN(Params p, ParamsFromConfig(shape, config));
  TF_ASSIGN_OR_RETURN(std::string pack_b, config.GetString("pack_b"));
  p.pack_b_once = pack_b == "once";
  if (shape.b_is_nk) {
    TF_ASSIGN_OR_RETURN(std::string kernel, config.GetString("kernel"));
    p.dot = kernel == "dot";
  }
  PackedGemmKernel kernel;
  if (p.dot) {
    // Nothing is packed, so pack_b, pack_a and kc do not apply.
    if (p.MR * p.nr_vecs > 32) {
      return absl::InvalidArgumentError(
          absl::StrCat("dot tile ", p.MR, "x", p.nr_vecs, " needs more than 32 vector registers"));
    }
    kernel.body = DotKernel(p);
  } else if (p.pack_b_once) {
    kernel.staged = {{"Bp", PackedBElements(p)}};
    kernel.prepare = PackB(p);
    kernel.body = PanelBody(p);
  } else {
    kernel.body = Allocate::Make("Bp", PackedBElements(p), MemoryScope::kGlobal,
                                 Block::Make({PackB(p), PanelBody(p)}));
  }
  return kernel;
}

}  // namespace tunefleet

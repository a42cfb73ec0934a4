#include "tuner_core/templates/winograd.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "tuner_core/ir/final_store.h"
#include "tuner_core/templates/loop_builder.h"

namespace tunefleet {
namespace {

using namespace ir;  // NOLINT

WinogradMatrices MakeMatrices(int64_t m) {
  WinogradMatrices x;
  x.m = m;
  x.alpha = m + 2;
  if (m == 2) {  // interpolation points 0, 1, -1 and infinity
    x.bt = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
    x.g = {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1};
    x.at = {1, 1, 1, 0, 0, 1, -1, -1};
  } else {  // m == 4: points 0, 1, -1, 2, -2 and infinity
    x.bt = {4, 0,  -5, 0, 1, 0, 0, -4, -4, 1,  1, 0, 0, 4, -4, -1, 1, 0,
            0, -2, -1, 2, 1, 0, 0, 2,  -1, -2, 1, 0, 0, 4, 0,  -5, 0, 1};
    x.g = {1.0 / 4,  0,        0,       -1.0 / 6, -1.0 / 6,  -1.0 / 6, -1.0 / 6, 1.0 / 6, -1.0 / 6,
           1.0 / 24, 1.0 / 12, 1.0 / 6, 1.0 / 24, -1.0 / 12, 1.0 / 6,  0,        0,       1};
    x.at = {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0, 0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1};
  }
  return x;
}

// sum_k coef[k] * term(k) for k < n, with the zero coefficients left out
// and the units without a multiply.
Expr Combine(const double* coef, int64_t n, const std::function<Expr(int64_t)>& term) {
  Expr sum;
  for (int64_t k = 0; k < n; ++k) {
    const double c = coef[k];
    if (c == 0) continue;
    Expr t = term(k);
    if (c == 1) {
      sum = sum.defined() ? sum + t : t;
    } else if (c == -1) {
      sum = sum.defined() ? sum - t : Expr(-1.0) * t;
    } else {
      sum = sum.defined() ? sum + Expr(c) * t : Expr(c) * t;
    }
  }
  return sum.defined() ? sum : Expr(0.0);
}

struct Geometry {
  int64_t alpha, th, tw, tiles, cb, kb, hp, wp;
};
Geometry GeometryOf(const WinogradConv& w) {
  Geometry g;
  g.alpha = w.m + 2;
  g.th = CeilDiv(w.a.out_h, w.m);
  g.tw = CeilDiv(w.a.out_w, w.m);
  g.tiles = WinogradTiles(w.a, w.m);
  g.cb = w.a.c / w.ib;
  g.kb = w.a.k / w.ob;
  const Padding pad = WinogradInputPadding(w.a, w.m);
  g.hp = pad.padded_h;
  g.wp = pad.padded_w;
  return g;
}

// One side of a tile transform T X T' (the input's B^T d B, the output's
// A^T M A), `lanes` channels in vectors of `vec`: for each element (i, j) of
// the rows x cols result, the sum over k < n of mat[i][k] * src(k, j) (T on
// the left) or of mat[j][k] * src(i, k) (T' on the right), handed to
// store(i, j, lane, value); where guard(i, j) is defined, only when it holds.
using TileLoad = std::function<Expr(int64_t, int64_t, Expr)>;
using TileStore = std::function<Stmt(int64_t, int64_t, Expr, Expr)>;
std::vector<Stmt> TransformSide(const std::string& tag, bool left, const std::vector<double>& mat,
                                int64_t rows, int64_t cols, int64_t n, int64_t lanes, int64_t vec,
                                const TileLoad& src, const TileStore& store,
                                const std::function<Expr(int64_t, int64_t)>& guard = nullptr) {
  std::vector<Stmt> stmts;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      Stmt s = VectorLoops(absl::StrCat(tag, i, "_", j), lanes, vec, [&](Expr l) {
        Expr v = Combine(&mat[(left ? i : j) * n], n,
                         [&](int64_t k) { return left ? src(k, j, l) : src(i, k, l); });
        return store(i, j, l, v);
      });
      Expr inside = guard ? guard(i, j) : Expr();
      stmts.push_back(inside.defined() ? IfThenElse::Make(inside, s) : s);
    }
  }
  return stmts;
}

// T X T' for one tile, `lanes` channels: T (rows x n, row-major in `mat`)
// applied to src's n x n from the left into the stack buffer `tmp` (rows x
// n), then from the right into store's rows x rows, where guard holds.
Stmt TileTransform(const std::string& tmp, const std::vector<double>& mat, int64_t rows, int64_t n,
                   int64_t lanes, int64_t vec, const TileLoad& src, const TileStore& store,
                   const std::function<Expr(int64_t, int64_t)>& guard = nullptr) {
  auto at = [&](int64_t i, int64_t j, Expr l) { return (i * n + j) * lanes + l; };
  std::vector<Stmt> stmts = TransformSide(
      "_" + tmp + "l", true, mat, rows, n, n, lanes, vec, src,
      [&](int64_t i, int64_t j, Expr l, Expr v) { return Store::Make(tmp, v, at(i, j, l)); });
  std::vector<Stmt> right = TransformSide(
      "_" + tmp + "r", false, mat, rows, rows, n, lanes, vec,
      [&](int64_t i, int64_t k, Expr l) { return Load::Make(tmp, at(i, k, l)); }, store, guard);
  stmts.insert(stmts.end(), right.begin(), right.end());
  return Allocate::Make(tmp, rows * n * lanes, MemoryScope::kStack, Block::Make(stmts));
}

// A parallel loop over (image n, channel block b of `blocks`, tile row th),
// each item walking its row's tiles: tile(n, b, th, tw, index) builds one
// tile's statement (index: the tile's place among all of them), `after`
// (where set) what follows the row.
using TileBody = std::function<Stmt(Expr, Expr, Expr, Expr, Expr)>;
Stmt TileRows(const std::string& tag, const WinogradConv& w, const Geometry& g, int64_t blocks,
              const TileBody& tile, const std::function<Stmt(Expr, Expr, Expr)>& after = nullptr) {
  Expr t = Var::Make(tag + "_t");
  Expr n = t / (blocks * g.th), b = (t / g.th) % blocks, th = t % g.th;
  Stmt row = Loop(tag + "_tw", g.tw, ForKind::kSerial,
                  [&](Expr tw) { return tile(n, b, th, tw, (n * g.th + th) * g.tw + tw); });
  if (after) row = Block::Make({row, after(n, b, th)});
  return For::Make(tag + "_t", 0, w.a.n * blocks * g.th, ForKind::kParallel, row);
}

// V[xi][tile][C] = B^T d B of every input tile d, per input channel.
Stmt InputTransform(const WinogradConv& w, const Geometry& g, const WinogradMatrices& x,
                    const std::string& data) {
  const int64_t A = g.alpha, ib = w.ib;
  return TileRows("wi", w, g, g.cb, [&](Expr n, Expr cb, Expr th, Expr tw, Expr tile) {
    // B^T d B, by way of "wi".
    return TileTransform(
        "wi", x.bt, A, A, ib, w.vec,
        [&](int64_t k, int64_t j, Expr l) {
          Expr row = th * w.m + k, col = tw * w.m + j;
          return Load::Make(data, (((n * g.cb + cb) * g.hp + row) * g.wp + col) * ib + l);
        },
        [&](int64_t i, int64_t j, Expr l, Expr v) {
          return Store::Make("wv", v, ((i * A + j) * g.tiles + tile) * w.a.c + cb * ib + l);
        });
  });
}

// M[xi][K/ob][tile][ob] = V[xi] . U[xi]: per position, a pointwise
// convolution over the tiles, `rows` tiles x ob channels per register tile.
Stmt Products(const WinogradConv& w, const Geometry& g, const std::string& kernel_vec) {
  const int64_t ob = w.ob, C = w.a.c;
  const int64_t rows = std::min(w.rows, g.tiles);
  Expr t = Var::Make("wp_t");
  Expr xi = t / g.kb, kb = t % g.kb;
  auto tile_at = [&](Expr p0, int64_t width, const std::string& tag) {
    auto acc = [&](Expr r, Expr o) { return r * ob + o; };
    Stmt init = RegisterTileLoops("_wz" + tag, width, ob, w.vec, [&](Expr r, Expr o) {
      return Store::Make("acc", 0.0, acc(r, o));
    });
    Stmt reduce = Loop("wp_c" + tag, C, ForKind::kSerial, [&](Expr c) {
      return RegisterTileLoops("_wm" + tag, width, ob, w.vec, [&](Expr r, Expr o) {
        Expr v = Load::Make("wv", (xi * g.tiles + p0 + r) * C + c);
        Expr u = Load::Make(kernel_vec, ((xi * g.kb + kb) * C + c) * ob + o);
        return Store::Make("acc", Load::Make("acc", acc(r, o)) + v * u, acc(r, o));
      });
    });
    Stmt store = RegisterTileLoops("_ws" + tag, width, ob, w.vec, [&](Expr r, Expr o) {
      return Store::Make("wm", Load::Make("acc", acc(r, o)),
                         ((xi * g.kb + kb) * g.tiles + p0 + r) * ob + o);
    });
    return Allocate::Make("acc", width * ob, MemoryScope::kStack,
                          Block::Make({init, reduce, store}));
  };
  const int64_t full = g.tiles / rows, rest = g.tiles % rows;
  std::vector<Stmt> parts;
  parts.push_back(
      Loop("wp_p", full, ForKind::kSerial, [&](Expr p) { return tile_at(p * rows, rows, ""); }));
  if (rest > 0) parts.push_back(tile_at(Expr(full * rows), rest, "n"));
  return For::Make("wp_t", 0, g.alpha * g.alpha * g.kb, ForKind::kParallel, Block::Make(parts));
}

// out = A^T M A of every tile, the tiles' parts past the output left out.
Stmt OutputTransform(const WinogradConv& w, const Geometry& g, const WinogradMatrices& x,
                     const std::string& out) {
  const int64_t A = g.alpha, m = w.m, ob = w.ob;
  const int64_t OH = w.a.out_h, OW = w.a.out_w;
  // The item's output rows, all their columns, are final after it.
  auto ready = [&](Expr n, Expr kb, Expr th) {
    Expr rows = OH % m == 0 ? Expr(m) : Min(Expr(m), OH - th * m);
    return OutputReady::Make(out, ((n * g.kb + kb) * OH + th * m) * OW * ob, 1, rows * (OW * ob),
                             0);
  };
  auto tile_at = [&](Expr n, Expr kb, Expr th, Expr tw, Expr tile) {
    // A^T M A, by way of "wo", where the output is: only the last tiles
    // of a row or column reach past it.
    return TileTransform(
        "wo", x.at, m, A, ob, w.vec,
        [&](int64_t k, int64_t j, Expr l) {
          return Load::Make("wm", (((k * A + j) * g.kb + kb) * g.tiles + tile) * ob + l);
        },
        [&](int64_t i, int64_t j, Expr l, Expr v) {
          Expr oh = th * m + i, ow = tw * m + j;
          return FinalStore(out, v, (((n * g.kb + kb) * OH + oh) * OW + ow) * ob + l, kb * ob + l);
        },
        [&](int64_t i, int64_t j) {
          Expr inside;
          if (OH % m != 0) inside = th * m + i < OH;
          if (OW % m != 0) {
            Expr col = tw * m + j < OW;
            inside = inside.defined() ? (inside && col) : col;
          }
          return inside;
        });
  };
  return TileRows("wo", w, g, g.kb, tile_at, ready);
}

}  // namespace

std::string WinogradReduceValue(int64_t m) { return absl::StrCat("winograd_f", m); }

int64_t WinogradTileOf(absl::string_view reduce_value) {
  for (int64_t m : kWinogradTiles) {
    if (reduce_value == WinogradReduceValue(m)) return m;
  }
  return 0;
}

bool WinogradApplies(const ConvArgs& a) {
  return a.r == 3 && a.s == 3 && a.stride_h == 1 && a.stride_w == 1 && a.dil_h == 1 &&
         a.dil_w == 1 && a.group == 1;
}

int64_t WinogradDefaultTile(const ConvArgs& a) {
  constexpr int64_t kMinTiles = 16, kMinChannels = 16, kMinDeepChannels = 128;
  if (!WinogradApplies(a)) return 0;
  if (WinogradTiles(a, 4) >= kMinTiles && a.c >= kMinChannels) return 4;
  if (WinogradTiles(a, 2) >= kMinTiles && a.c >= kMinDeepChannels && a.k >= kMinDeepChannels) {
    return 2;
  }
  return 0;
}

const WinogradMatrices& WinogradMatricesFor(int64_t m) {
  static const WinogradMatrices* f2 = new WinogradMatrices(MakeMatrices(2));
  static const WinogradMatrices* f4 = new WinogradMatrices(MakeMatrices(4));
  return m == 2 ? *f2 : *f4;
}

Padding WinogradInputPadding(const ConvArgs& a, int64_t m) {
  Padding p;
  p.top = a.pad_top;
  p.left = a.pad_left;
  p.padded_h = std::max(a.h + a.pad_top + a.pad_bottom, CeilDiv(a.out_h, m) * m + 2);
  p.padded_w = std::max(a.w + a.pad_left + a.pad_right, CeilDiv(a.out_w, m) * m + 2);
  return p;
}

int64_t WinogradTiles(const ConvArgs& a, int64_t m) {
  return a.n * CeilDiv(a.out_h, m) * CeilDiv(a.out_w, m);
}

int64_t WinogradKernelElements(const ConvArgs& a, int64_t m) {
  return (m + 2) * (m + 2) * a.k * a.c;
}

Stmt WinogradPackKernel(const WinogradConv& w, const std::string& dst) {
  const WinogradMatrices& x = WinogradMatricesFor(w.m);
  const int64_t A = x.alpha, C = w.a.c, ob = w.ob, KB = w.a.k / ob;
  Expr t = Var::Make("wk_t");
  Expr kb = t / C, c = t % C;
  Stmt body = Loop("wk_o", ob, ForKind::kSerial, [&](Expr o) {
    Expr k = kb * ob + o;
    std::vector<Stmt> stmts;
    for (int64_t i = 0; i < A; ++i) {
      for (int64_t j = 0; j < A; ++j) {
        // U[i][j] = sum_{a,b} G[i][a] g[a][b] G[j][b]
        double coef[9];
        for (int64_t e = 0; e < 9; ++e) coef[e] = x.g[i * 3 + e / 3] * x.g[j * 3 + e % 3];
        Expr v =
            Combine(coef, 9, [&](int64_t e) { return Load::Make("kernel", (k * C + c) * 9 + e); });
        stmts.push_back(Store::Make(dst, v, (((i * A + j) * KB + kb) * C + c) * ob + o));
      }
    }
    return Block::Make(stmts);
  });
  return For::Make("wk_t", 0, KB * C, ForKind::kParallel, body);
}

Stmt WinogradCompute(const WinogradConv& w, const std::string& data, const std::string& kernel_vec,
                     const std::string& out) {
  const WinogradMatrices& x = WinogradMatricesFor(w.m);
  const Geometry g = GeometryOf(w);
  Stmt passes = Block::Make(
      {InputTransform(w, g, x, data), Products(w, g, kernel_vec), OutputTransform(w, g, x, out)});
  const int64_t positions = g.alpha * g.alpha;
  passes = Allocate::Make("wm", positions * g.tiles * w.a.k, MemoryScope::kGlobal, passes);
  return Allocate::Make("wv", positions * g.tiles * w.a.c, MemoryScope::kGlobal, passes);
}

std::vector<float> WinogradTransformWeights(const std::vector<float>& weights, int64_t k, int64_t c,
                                            int64_t m, int64_t ob) {
  const WinogradMatrices& x = WinogradMatricesFor(m);
  const int64_t A = x.alpha, kb_count = k / ob;
  std::vector<float> u(static_cast<size_t>(A * A * k * c));
  for (int64_t kk = 0; kk < k; ++kk) {
    const int64_t kb = kk / ob, o = kk % ob;
    for (int64_t cc = 0; cc < c; ++cc) {
      const float* g = &weights[static_cast<size_t>((kk * c + cc) * 9)];
      for (int64_t i = 0; i < A; ++i) {
        for (int64_t j = 0; j < A; ++j) {
          // As the kernel's prepare stage computes it: fp32 products of the
          // fp32-rounded coefficients.
          float v = 0.0f;
          for (int64_t e = 0; e < 9; ++e) {
            const float coef = static_cast<float>(x.g[i * 3 + e / 3] * x.g[j * 3 + e % 3]);
            if (coef != 0.0f) v += coef * g[e];
          }
          u[static_cast<size_t>((((i * A + j) * kb_count + kb) * c + cc) * ob + o)] = v;
        }
      }
    }
  }
  return u;
}

}  // namespace tunefleet

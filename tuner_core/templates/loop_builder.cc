#include "tuner_core/templates/loop_builder.h"

namespace tunefleet {

using ir::Expr;
using ir::Stmt;

Stmt Loop(const std::string& var, int64_t extent, ir::ForKind kind,
          const std::function<Stmt(Expr)>& body) {
  if (extent <= 0) return Stmt();
  if (extent == 1) return body(Expr(0));
  return ir::For::Make(var, 0, extent, kind, body(ir::Var::Make(var)));
}

std::vector<int64_t> Divisors(int64_t n, int64_t max) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n && d <= max; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

Stmt VectorLoops(const std::string& suffix, int64_t lanes, int64_t vec,
                 const std::function<Stmt(Expr)>& body) {
  const int64_t full = lanes / vec, tail = lanes % vec;
  Stmt vectors = Loop("v" + suffix, full, ir::ForKind::kUnrolled, [&](Expr v) {
    return Loop("l" + suffix, vec, ir::ForKind::kVectorized,
                [&](Expr l) { return body(v * vec + l); });
  });
  if (tail == 0) return vectors;
  Stmt rest = Loop("t" + suffix, tail, ir::ForKind::kVectorized,
                   [&](Expr l) { return body(Expr(full * vec) + l); });
  return vectors.defined() ? ir::Block::Make({vectors, rest}) : rest;
}

Stmt RegisterTileLoops(const std::string& suffix, int64_t rows, int64_t lanes, int64_t vec,
                       const std::function<Stmt(Expr, Expr)>& body) {
  return Loop("r" + suffix, rows, ir::ForKind::kUnrolled, [&](Expr r) {
    return VectorLoops(suffix, lanes, vec, [&](Expr l) { return body(r, l); });
  });
}

}  // namespace tunefleet

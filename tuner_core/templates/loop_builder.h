// Small helpers that templates share to build loop nests.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_LOOP_BUILDER_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_LOOP_BUILDER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tuner_core/ir/ir.h"

namespace tunefleet {

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// for (var in [0, extent)) with `kind`; an extent of 1 substitutes 0 and
// makes no loop, an extent of 0 makes nothing.
ir::Stmt Loop(const std::string& var, int64_t extent, ir::ForKind kind,
              const std::function<ir::Stmt(ir::Expr)>& body);

// The divisors of n that are <= max, ascending.
std::vector<int64_t> Divisors(int64_t n, int64_t max);

// `lanes` fp32 values as vectors of `vec` lanes: lanes / vec full vectors
// (unrolled, each one's lanes vectorized), then, where vec does not divide
// lanes, one narrower vector of the lanes % vec left (a block of 58 with
// vec 16: 16 + 16 + 16 + 10 lanes, four registers). body(lane) builds one
// element's statement.
ir::Stmt VectorLoops(const std::string& suffix, int64_t lanes, int64_t vec,
                     const std::function<ir::Stmt(ir::Expr)>& body);

// A register tile of `rows` x `lanes` fp32 values: rows unrolled, each row's
// lanes as VectorLoops. body(row, lane) builds one element's statement.
ir::Stmt RegisterTileLoops(const std::string& suffix, int64_t rows, int64_t lanes, int64_t vec,
                           const std::function<ir::Stmt(ir::Expr, ir::Expr)>& body);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_LOOP_BUILDER_H_

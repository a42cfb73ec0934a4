// UnrollLoops replaces every ForKind::kUnrolled loop with a constant extent
// by that many copies of its body, the loop variable substituted by each
// constant. Extents above `max_unroll` (or not constant) are an
// InvalidArgument: a config that asks for it is reported as
// INSTANTIATION_ERROR rather than compiled into a huge function.
#ifndef TUNEFLEET_TOOLCHAIN_PASSES_UNROLL_LOOPS_H_
#define TUNEFLEET_TOOLCHAIN_PASSES_UNROLL_LOOPS_H_

#include "absl/status/statusor.h"
#include "tuner_core/ir/ir.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<ir::Stmt> UnrollLoops(const ir::Stmt& stmt, int64_t max_unroll = 256);

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLCHAIN_PASSES_UNROLL_LOOPS_H_

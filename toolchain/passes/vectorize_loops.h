// VectorizeLoops turns every ForKind::kVectorized loop (constant extent L)
// into straight-line vector code: the loop variable becomes
// Ramp(min, 1, L), and the expressions and stores that depend on it become
// L-lane vectors (contiguous loads/stores where the index is a unit-stride
// ramp, gathers/scatters otherwise). Scalars meeting vectors are broadcast.
//
// A loop that cannot be vectorized (non-constant extent, a store of a vector
// value to a scalar address, i.e. a reduction across lanes, a condition or
// allocation that depends on the lane) is an InvalidArgument naming why; the
// builder reports it as INSTANTIATION_ERROR.
#ifndef TUNEFLEET_TOOLCHAIN_PASSES_VECTORIZE_LOOPS_H_
#define TUNEFLEET_TOOLCHAIN_PASSES_VECTORIZE_LOOPS_H_

#include "absl/status/statusor.h"
#include "tuner_core/ir/ir.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<ir::Stmt> VectorizeLoops(const ir::Stmt& stmt);

}  // namespace tunefleet

#endif  // TUNEFLEET_TOOLCHAIN_PASSES_VECTORIZE_LOOPS_H_

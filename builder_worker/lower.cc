#include "builder_worker/lower.h"

#include "builder_worker/passes/unroll_loops.h"
#include "builder_worker/passes/vectorize_loops.h"
#include "common/status_macros.h"

namespace tunefleet {

absl::StatusOr<ir::LoweredFunc> Lower(const ir::LoweredFunc& func) {
  ir::LoweredFunc lowered = func;
  // Vectorize first so unrolled copies substitute constants into ramp bases.
  TF_ASSIGN_OR_RETURN(lowered.body, VectorizeLoops(lowered.body));
  TF_ASSIGN_OR_RETURN(lowered.body, UnrollLoops(lowered.body));
  return lowered;
}

}  // namespace tunefleet

#include "toolchain/lower.h"

#include "common/status_macros.h"
#include "toolchain/passes/fuse_epilogue.h"
#include "toolchain/passes/unroll_loops.h"
#include "toolchain/passes/vectorize_loops.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<ir::LoweredFunc> Lower(const ir::LoweredFunc& func) {
  ir::LoweredFunc lowered = func;
  // Vectorize first so unrolled copies substitute constants into ramp bases.
  for (ir::Stmt* stage : {&lowered.body, &lowered.prepare, &lowered.finish}) {
    if (!stage->defined()) continue;
    // Final-store marks the builder did not fuse an epilogue into go first.
    *stage = RemoveFinalStoreMarks(*stage);
    TF_ASSIGN_OR_RETURN(*stage, VectorizeLoops(*stage));
    TF_ASSIGN_OR_RETURN(*stage, UnrollLoops(*stage));
  }
  return lowered;
}

}  // namespace tunefleet

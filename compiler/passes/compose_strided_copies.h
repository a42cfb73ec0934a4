// A strided copy of a strided copy read as one: where a strided copy (a
// Transpose, a Slice, a reshaped view's gather) reads a buffer that only
// another strided copy writes and nothing else reads, it reads that copy's
// input through the composed strides and the first copy goes. An encoder's
// attention slices q, k and v out of the fused projection and then
// transposes each into heads: three copies of [S, D] per layer that no one
// needed (BERT-style encoders, GPT-2). An element-wise step (kBroadcast)
// reads its first operand the same way: q's heads scaled by 1 / sqrt(d)
// straight from the projection, with no copy of q before it.
//
// Only where each axis of the second copy moves along one axis of the
// first's output without carrying into the next (any reshape between them
// splits or keeps axes), the intermediate is no model output, no view or
// view root and has one reader, and nothing writes the first copy's input
// between the two steps.
//
//   ComposeStridedCopies(&built.plan);
#ifndef TUNEFLEET_COMPILER_PASSES_COMPOSE_STRIDED_COPIES_H_
#define TUNEFLEET_COMPILER_PASSES_COMPOSE_STRIDED_COPIES_H_

#include "compiler/runtime/plan.h"

namespace tunefleet {

// The number of strided copies it removed.
int ComposeStridedCopies(ModelPlan* plan);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_COMPOSE_STRIDED_COPIES_H_

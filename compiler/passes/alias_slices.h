// Channel slices without a copy: a channel gather that takes whole channel
// blocks in a row, at batch 1, in its input's own layout (a Split or Slice
// of channels: ShuffleNet's channel split, a grouped block's halves) reads
// floats that lie back to back in its input; its output becomes a view of
// them (PlanBuffer::alias_of, alias_offset) and the gather step goes. So
// does a strided copy of plain tensors that reads one run of its input (a
// Gather of one index or a Slice of the outer axes: attention's q, k and v
// taken from one tensor, a Swin or ViT block's).
//
// Only where it is safe: the slice has one writer (the gather), is not a
// model input or output nor already placed (a concatenation's input written
// in place stays that, passes/alias_concats.h), its input has one writer
// too (nobody writes the floats the view reads after they are made), and
// the view's place is 64-byte aligned (the kernels' vectors). It runs after
// AliasConcatInputs, so a view's root is always a buffer that is no alias.
//
//   AliasConcatInputs(&built.plan);
//   AliasChannelSlices(&built.plan);
#ifndef TUNEFLEET_COMPILER_PASSES_ALIAS_SLICES_H_
#define TUNEFLEET_COMPILER_PASSES_ALIAS_SLICES_H_

#include "compiler/runtime/plan.h"

namespace tunefleet {

// The number of gather and copy steps it removed.
int AliasChannelSlices(ModelPlan* plan);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_ALIAS_SLICES_H_

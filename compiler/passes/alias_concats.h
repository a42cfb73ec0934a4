// Concatenations without a copy: where a concatenation's output is its
// inputs back to back in memory (its outer extent is 1: a batch-1 channel
// concat in NCHW or in any channel block, or a concat along the first
// axis), each input is written in place inside the output's buffer and the
// concat step goes. DenseNet's concats of every earlier layer's features,
// each a prefix of the next, become views of one buffer; an Inception
// block's branches write their slices of its output.
//
// An input is placed so only when it is an activation with one writer
// (not a model input or output), exactly the
// size the concat reads, not already placed elsewhere, and its place is
// 64-byte aligned (the kernels' vectors); a concat any of whose inputs
// cannot be placed stays a copy. Aliases are PlanBuffer::alias_of and
// alias_offset; the runtime's arena gives an alias's root the union of
// their lifetimes (model_runtime.h PlanArena).
//
//   AliasConcatInputs(&built.plan);
#ifndef TUNEFLEET_COMPILER_PASSES_ALIAS_CONCATS_H_
#define TUNEFLEET_COMPILER_PASSES_ALIAS_CONCATS_H_

#include "compiler/runtime/plan.h"

namespace tunefleet {

// The number of concat steps it removed.
int AliasConcatInputs(ModelPlan* plan);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_ALIAS_CONCATS_H_

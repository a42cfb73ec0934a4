// Removes the plan's channel-gather steps whose output nothing reads: no
// later step (as an input, a staged buffer, an epilogue's bias or residual)
// and no model output. The emitter leaves them behind where each reader of
// a gather gathered through it instead (a ShuffleNet shuffle read only by
// the two halves sliced from it). Repeats until none is left.
//
//   DropUnreadChannelGathers(&plan);
#ifndef TUNEFLEET_COMPILER_PASSES_PRUNE_STEPS_H_
#define TUNEFLEET_COMPILER_PASSES_PRUNE_STEPS_H_

#include "compiler/runtime/plan.h"

namespace tunefleet {

void DropUnreadChannelGathers(ModelPlan* plan);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_PRUNE_STEPS_H_

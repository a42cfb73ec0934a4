// Squeeze-excite scales folded into the convolution after them: a channel
// Mul (x times s[c], the last step of a squeeze-excite block: EfficientNet,
// MobileNet-v3, RegNet-Y) whose product only a blocked, ungrouped
// convolution kernel reads becomes a "scale_weights" step that scales the
// kernel's packed weights by s along their input channels, and the kernel
// reads x itself: W (x s) = (W diag s) x, so a pass over x goes and a pass
// over the weights comes in its place.
//
// Only where that saves work and is safe: at batch 1 (one s for the
// image), where the weights are fewer floats than x, and where the product
// is no model output, no view and has no other reader. The scaled weights
// are an activation buffer of the arena, written in the Mul's place.
//
//   FoldChannelScales(&built.plan);
#ifndef TUNEFLEET_COMPILER_PASSES_FOLD_CHANNEL_SCALES_H_
#define TUNEFLEET_COMPILER_PASSES_FOLD_CHANNEL_SCALES_H_

#include "compiler/runtime/plan.h"

namespace tunefleet {

// The number of channel Mul steps it replaced.
int FoldChannelScales(ModelPlan* plan);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_FOLD_CHANNEL_SCALES_H_

// An element-wise Add whose only reader is a last-axis Softmax folded into
// it: softmax(x + bias) in one step, each row's sum made and normalised in
// cache instead of a [heads, S, S] tensor written and read back. Attention's
// scores plus a relative-position bias or a mask (Swin's windows, a masked
// encoder).
//
// Only where the Add (kBroadcast, kAdd) reads one operand row-major over its
// whole output (the scores) and the other through strides (the bias,
// broadcast), the sum is no model output, nothing else reads it or a view of
// it (a Reshape between them is a view), and nothing writes either operand
// between the two steps. The Add goes; the Softmax reads both.
//
//   FuseSoftmaxBias(&built.plan);
#ifndef TUNEFLEET_COMPILER_PASSES_FUSE_SOFTMAX_BIAS_H_
#define TUNEFLEET_COMPILER_PASSES_FUSE_SOFTMAX_BIAS_H_

#include "compiler/runtime/plan.h"

namespace tunefleet {

// The number of Adds it folded into their Softmax.
int FuseSoftmaxBias(ModelPlan* plan);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_FUSE_SOFTMAX_BIAS_H_

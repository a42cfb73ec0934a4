// A constant per-channel scale folded into the MatMul before it (ConvNeXt's
// and CaiT's layer scale): y = gamma * T(x W + b), T a Transpose that moves
// the MatMul's last axis to the axis gamma scales (or none, gamma then
// scaling the last axis), becomes T(x W' + b') with W'[i][n] = W[i][n]
// gamma[n] and b'[n] = b[n] gamma[n]; the Mul node is gone, and with it a
// pass over the activation per block.
//
// Only where W, b and gamma are float constants, gamma holds one value per
// output column (or one value), and each tensor on the way (the product,
// the sum, the transpose) has that one reader and is no model output. The
// original constants stay as they are (another node may read them).
//
//   TF_RETURN_IF_ERROR(FoldLayerScale(&graph));
#ifndef TUNEFLEET_COMPILER_PASSES_FOLD_LAYER_SCALE_H_
#define TUNEFLEET_COMPILER_PASSES_FOLD_LAYER_SCALE_H_

#include "tuner_core/graph/graph.h"

namespace tunefleet {

// The number of Mul nodes folded away.
int FoldLayerScale(Graph* graph);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_FOLD_LAYER_SCALE_H_

// BatchNormalization folded into the Conv it follows: where a Conv's only
// reader is an inference BatchNormalization whose scale, bias, mean and
// variance are constants, the Conv gets new weights and bias
// (w' = w * s, b' = (b - mean) * s + beta, s = scale / sqrt(var + eps))
// and writes the BatchNormalization's output; the BatchNormalization node
// is gone. One that follows anything else stays (the runtime's batch_norm).
//
//   TF_RETURN_IF_ERROR(FoldBatchNorm(&graph));
#ifndef TUNEFLEET_COMPILER_PASSES_FOLD_BATCH_NORM_H_
#define TUNEFLEET_COMPILER_PASSES_FOLD_BATCH_NORM_H_

#include "absl/status/status.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

// InvalidArgument naming the node when a foldable pair's constants do not
// fit each other (a per-channel tensor of the wrong length).
[[nodiscard]] absl::Status FoldBatchNorm(Graph* graph);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_FOLD_BATCH_NORM_H_

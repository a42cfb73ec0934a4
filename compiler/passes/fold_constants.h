// Constant folding for compiling a model: evaluates, at compile time, the
// nodes whose every input is a constant (or, for Shape, whose input has a
// static shape) so the plan holds only real compute. This is what removes
// the shape-computing subgraphs exporters write (Shape -> Gather -> Add ->
// Div -> Mul feeding a Slice's ends, Concat/Unsqueeze building a Reshape's
// shape): their outputs become int64/float constants of the graph and the
// nodes disappear.
//
//   TF_ASSIGN_OR_RETURN(Graph folded, FoldConstants(graph));
//
// Folds Identity, Shape, Gather, Unsqueeze, Squeeze, Reshape, Flatten,
// Concat, Cast (to float/int64) and elementwise Add/Sub/Mul/Div (one operand
// scalar or both of one size); any other node is kept as it is.
#ifndef TUNEFLEET_COMPILER_PASSES_FOLD_CONSTANTS_H_
#define TUNEFLEET_COMPILER_PASSES_FOLD_CONSTANTS_H_

#include "absl/status/statusor.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

// `graph` with every foldable node replaced by constants; InvalidArgument
// naming the node when a foldable node's constants do not fit it (an index
// out of range, mismatched sizes).
[[nodiscard]] absl::StatusOr<Graph> FoldConstants(Graph graph);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_FOLD_CONSTANTS_H_

// Constant folding of a model's graph: evaluates, when the model loads, the
// nodes whose every input is a constant (or, for Shape, whose input has a
// static shape), so task extraction and the compiler see every shape and
// a compiled plan holds only real compute. This is what removes
// the shape-computing subgraphs exporters write (Shape -> Gather -> Add ->
// Div -> Mul feeding a Slice's ends, Concat/Unsqueeze building a Reshape's
// shape): their outputs become int64/float constants of the graph and the
// nodes disappear.
//
//   TF_ASSIGN_OR_RETURN(Graph folded, FoldConstants(graph));
//
// Folds Shape and, when every input is constant, Identity, Reshape,
// (Un)Squeeze, Flatten, Dropout, Cast, ConstantOfShape, Range, Expand,
// Where, Gather, Concat, Slice, Transpose, the comparisons and logic
// operators, broadcasting arithmetic, Max/Min/Pow/Mod, unary math, the
// float functions Relu, Sigmoid, Exp, Log, Tanh, Erf and Clip, and MatMul
// (rank 2 or more) and Gemm of float constants (a position-bias MLP over a constant
// table); any other node is kept as it is.
#ifndef TUNEFLEET_TUNER_CORE_GRAPH_FOLD_CONSTANTS_H_
#define TUNEFLEET_TUNER_CORE_GRAPH_FOLD_CONSTANTS_H_

#include "absl/status/statusor.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

// `graph` with every foldable node replaced by constants; InvalidArgument
// naming the node when a foldable node's constants do not fit it (an index
// out of range, mismatched sizes).
[[nodiscard]] absl::StatusOr<Graph> FoldConstants(Graph graph);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_GRAPH_FOLD_CONSTANTS_H_

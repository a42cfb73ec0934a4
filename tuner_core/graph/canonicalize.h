// Canonical forms of a few ONNX spellings, when a model loads (before shape
// completion and task extraction), so the compiler and the tuner see one
// form of each operator:
//   - Max, Min and Sum of three or more inputs become chains of binary nodes
//     (Max(a, b, c) = Max(Max(a, b), c));
//   - a Gemm with transA = 1 reads a Transpose of its A (the tuned dense
//     kernel takes A as [M, K]).
// New nodes and tensors are named after the node they came from
// ("<node>.part1", "<node>.A_t").
//
//   TF_RETURN_IF_ERROR(Canonicalize(&graph));
#ifndef TUNEFLEET_TUNER_CORE_GRAPH_CANONICALIZE_H_
#define TUNEFLEET_TUNER_CORE_GRAPH_CANONICALIZE_H_

#include "absl/status/status.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

// InvalidArgument naming the node for a variadic node with no input.
[[nodiscard]] absl::Status Canonicalize(Graph* graph);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_GRAPH_CANONICALIZE_H_

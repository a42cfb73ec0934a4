// Canonical forms of a few ONNX spellings, when a model loads (before shape
// completion and task extraction), so the compiler and the tuner see one
// form of each operator:
//   - Max, Min and Sum of three or more inputs become chains of binary nodes
//     (Max(a, b, c) = Max(Max(a, b), c));
//   - a Gemm with transA = 1 reads a Transpose of its A (the tuned dense
//     kernel takes A as [M, K]);
//   - a 2-D ConvTranspose with constant weights becomes a Conv (stride 1,
//     the tuned conv2d) of its input spread by the strides with zeros and
//     padded (kDilateOp), with the weights flipped and their channel axes
//     swapped per group;
//   - an Einsum of two operands that is a batched matrix product (MaxViT's
//     attention) becomes a MatMul (the tuned kernels) of its operands
//     transposed to [batch, M, K] and [batch, K, N], its product transposed
//     to the output's order where that differs; an Einsum of one operand
//     that only permutes becomes a Transpose;
//   - ReduceL2, ReduceSumSquare and ReduceL1 become a ReduceSum of the
//     squares or absolute values (and a Sqrt for ReduceL2).
// New nodes and tensors are named after the node they came from
// ("<node>.part1", "<node>.A_t").
//
//   TF_RETURN_IF_ERROR(Canonicalize(&graph));
#ifndef TUNEFLEET_TUNER_CORE_GRAPH_CANONICALIZE_H_
#define TUNEFLEET_TUNER_CORE_GRAPH_CANONICALIZE_H_

#include "absl/status/status.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

// x [N, C, H, W] with strides - 1 zeros between its values along H and W,
// then padded by pads (top, left, bottom, right; negative: cropped).
inline constexpr char kDilateOp[] = "tunefleet.Dilate";

// InvalidArgument naming the node for a variadic node with no input, a
// ConvTranspose that is not 2-D, has weights computed at run time, or
// attributes that do not fit, or an Einsum of another kind (its equation
// and why).
[[nodiscard]] absl::Status Canonicalize(Graph* graph);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_GRAPH_CANONICALIZE_H_

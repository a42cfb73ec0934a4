// Recognises the decompositions exporters write for operators the runtime
// has whole, and rewrites each into one node:
//  - GELU, Erf form: x * 0.5 * (1 + Erf(x / sqrt(2))) (any order of the
//    products, x / sqrt 2 or x * (1 / sqrt 2)) -> Gelu;
//  - GELU, tanh form (GPT-2's): x * 0.5 * (1 + Tanh(sqrt(2 / pi) * (x +
//    0.044715 * x^3))), x^3 as Pow or two products -> Gelu (approximate
//    "tanh");
//  - SiLU: x * Sigmoid(x) -> kSiluOp (operator_table.h);
//  - LayerNorm as opset 13-16 exports it: ReduceMean over the last axis,
//    Sub, Pow 2, ReduceMean, Add epsilon, Sqrt, Div, then Mul by gamma and
//    Add of beta -> LayerNormalization (axis -1);
//  - a zero constant Pad of the spatial axes, then an AveragePool without
//    pads of its own -> the AveragePool with those pads, count_include_pad;
//  - a channel shuffle, Reshape [N, g, C/g, H, W], Transpose (0, 2, 1, 3, 4)
//    and Reshape back -> a Gather of the channels (constant indices).
// Each rewritten chain's inner tensors must have no other reader, so
// nothing else sees the difference. The new nodes are pointwise (fused into
// a kernel's epilogue later, fuse_epilogues.h) or one runtime step (the
// pool in its input's channel block, no padded copy through NCHW).
//
//   TF_RETURN_IF_ERROR(FusePatterns(&graph));
#ifndef TUNEFLEET_COMPILER_PASSES_FUSE_PATTERNS_H_
#define TUNEFLEET_COMPILER_PASSES_FUSE_PATTERNS_H_

#include "absl/status/status.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

[[nodiscard]] absl::Status FusePatterns(Graph* graph);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_FUSE_PATTERNS_H_

// Where with a constant condition and one constant side (the attention
// masks of GPT-2, DistilBERT and HuggingFace encoders: masked_fill(mask,
// -inf) of the scores) as one broadcasting select step: the node becomes
// kSelectOp (tensor_op_lowering.h) of the run-time operand and a constant
// "fill" of the condition's and the constant's broadcast shape, holding the
// constant where the condition picks it and NaN where it picks the run-time
// operand (BinaryFunc::kSelect: out = fill unless it is NaN, else the
// operand). Exact for every operand value; a NaN constant to fill with is
// refused by name. A Where of two run-time operands or a run-time
// condition is left as it is (emit_plan refuses it by name).
//
//   TF_RETURN_IF_ERROR(LowerConstantWheres(&graph));
#ifndef TUNEFLEET_COMPILER_PASSES_LOWER_WHERE_H_
#define TUNEFLEET_COMPILER_PASSES_LOWER_WHERE_H_

#include "absl/status/status.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

[[nodiscard]] absl::Status LowerConstantWheres(Graph* graph);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_LOWER_WHERE_H_

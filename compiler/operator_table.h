// The one list of ONNX operators `tunefleet compile` claims, and per
// operator: how it lowers, the runtime step it becomes, the layouts it runs
// in, whether it fuses into a kernel's epilogue, and the attributes it
// supports (any other attribute a node sets is refused by name). The
// supported-operator list of messages, the refusals, shape inference and
// the plan emitter all read it, so a new operator is one entry here and,
// where it needs one, one runtime kernel (runtime/ops.h).
//
//   const OperatorInfo* op = FindOperator(node.op_type);
//   if (op == nullptr) return UnsupportedOperatorError(node);
//   TF_RETURN_IF_ERROR(CheckAttributes(node, *op));
#ifndef TUNEFLEET_COMPILER_OPERATOR_TABLE_H_
#define TUNEFLEET_COMPILER_OPERATOR_TABLE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/runtime/plan.h"
#include "compiler/tensor_op_lowering.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

// The op type of x * Sigmoid(x) fused into one node (passes/fuse_patterns.h);
// not an ONNX operator.
inline constexpr char kSiluOp[] = "tunefleet.SiLU";

enum class OpLowering {
  kTunedKernel,  // a task's tuned kernel (Conv, Gemm, MatMul): the model's layers
  kPool,         // runtime pooling in the input's channel block
  kAdd,          // Add of two activations of one shape: any layout; else broadcasting
  kPointwise,    // one function of each element (`func`): any layout, fuses into epilogues
  kTensorOp,     // a runtime tensor operator on plain buffers (`lower`)
  kAlias,        // the same floats in the same order: the output names the input's buffer
  kSplit,        // one strided copy per output
  kConstant,  // evaluated at compile time (tuner_core/graph/fold_constants.h); constant inputs only
};

struct OperatorInfo {
  std::string op_type;
  OpLowering lowering = OpLowering::kTensorOp;
  TensorOpLowering lower = nullptr;           // kTensorOp, and kAdd's broadcasting case
  PointwiseFunc func = PointwiseFunc::kNone;  // kPointwise
  bool fuses_into_epilogue = false;           // a sole consumer of a kernel's output
  std::vector<std::string> attributes;        // the ones it supports
  std::string note;                           // its limits, for the supported list
};

// Every claimed operator, in the order messages list them.
const std::vector<OperatorInfo>& OperatorTable();

// The entry of `op_type`, or null when compile does not claim it.
const OperatorInfo* FindOperator(const std::string& op_type);

// InvalidArgument naming the node, its operator and the attribute when the
// node sets an attribute `info` does not support.
[[nodiscard]] absl::Status CheckAttributes(const GraphNode& node, const OperatorInfo& info);

// InvalidArgument naming the node and its operator, listing what is claimed.
[[nodiscard]] absl::Status UnsupportedOperatorError(const GraphNode& node);

// "Conv, Gemm, MatMul (constant 2-D weights, or batched), ..." for messages.
std::string SupportedOperatorList();

// The activation a kPointwise node computes, its parameters read from the
// node's attributes (Clip: min/max attributes, or constant inputs 1 and 2,
// either may be omitted); InvalidArgument naming the node when they are
// not constants.
[[nodiscard]] absl::StatusOr<Activation> ActivationOf(const Graph& graph, const GraphNode& node,
                                                      const OperatorInfo& info);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_OPERATOR_TABLE_H_

// From one ONNX node to a runtime tensor-operator step (plan.h:
// kStridedCopy, kBroadcast, kReduce, kConcat, kBatchNorm, kSoftmax, kPad,
// kGather, kLayerNorm):
// the shapes, strides and offsets worked out at compile time, so the
// runtime only walks them. Covers what transformer layers contain beside
// their matrix products: Transpose, Slice (constant starts/ends/axes/steps),
// broadcasting Add/Sub/Mul/Div/Pow/PRelu, Concat, Softmax, reductions over
// adjacent axes, Gather at constant indices, a BatchNormalization no Conv
// absorbed and Pad. The
// operator table (operator_table.h) names each operator's lowering; the
// plan emitter binds the step's buffers.
//
//   TF_ASSIGN_OR_RETURN(LoweredTensorOp op, LowerTensorOp(graph, node, kLowerTranspose));
#ifndef TUNEFLEET_COMPILER_TENSOR_OP_LOWERING_H_
#define TUNEFLEET_COMPILER_TENSOR_OP_LOWERING_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/runtime/plan.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

// A Where with a constant condition and one constant side, as the compiler
// rewrites it (passes/lower_where.h): inputs the run-time operand and the
// fill (BinaryFunc::kSelect).
inline constexpr char kSelectOp[] = "tunefleet.Select";

struct LoweredTensorOp {
  PlanStep step;                      // op, shapes, strides; no buffers yet
  std::vector<std::string> operands;  // the tensors it reads, in step.inputs order
  // Tensors it writes after the first, in step.outputs order ("" where the
  // graph does not read one: it still gets a buffer of in_shape[0] floats).
  std::vector<std::string> more_outputs;
};

// One operator's lowering: fills in `lowered` (whose step already holds the
// node and the output shape, and whose operands the first input) from the
// node's float32 input and output shapes.
using TensorOpLowering = absl::Status (*)(const Graph& graph, const GraphNode& node,
                                          const TensorShape& in, const TensorShape& out,
                                          LoweredTensorOp& lowered);

extern const TensorOpLowering kLowerTranspose;
extern const TensorOpLowering kLowerSlice;
extern const TensorOpLowering kLowerBinary;  // Add, Sub, Mul, Div, Pow, PRelu (numpy broadcasting)
extern const TensorOpLowering kLowerConcat;
extern const TensorOpLowering kLowerPad;     // constant, reflect and edge modes
extern const TensorOpLowering kLowerDilate;  // canonicalize.h's kDilateOp, as a strided pad
extern const TensorOpLowering kLowerBatchNorm;
extern const TensorOpLowering kLowerSoftmax;
extern const TensorOpLowering kLowerReduce;  // ReduceMean/Sum/Max/Min over adjacent axes
extern const TensorOpLowering kLowerGather;  // constant indices
extern const TensorOpLowering kLowerExpand;  // to the output's (inferred) shape
extern const TensorOpLowering kLowerLayerNorm;
extern const TensorOpLowering kLowerResize;  // nearest, linear, cubic; constant scales or sizes
extern const TensorOpLowering kLowerInstanceNorm;  // a layer norm per (n, c), scale per channel

// The step for `node` by `lower`, or InvalidArgument naming the node for a
// use the lowering does not cover (non-constant Slice bounds, ReduceMean
// over several axes, non-float tensors, ...).
[[nodiscard]] absl::StatusOr<LoweredTensorOp> LowerTensorOp(const Graph& graph,
                                                            const GraphNode& node,
                                                            TensorOpLowering lower);

// Add/Sub/Mul/Div of a 4-D activation [N, C, H, W] (first) by one value per
// channel ([N or 1, C, 1, 1] or [C, 1, 1]): the function, for a step that
// runs in the activation's layout (a squeeze-excite scale); else nullopt.
// Add and Mul take the activation as either operand (torchvision's
// squeeze-excite is scale * input): ChannelOperandFirst says which (-1: none).
std::optional<BinaryFunc> ChannelBinaryOf(const Graph& graph, const GraphNode& node);
int ChannelOperandFirst(const Graph& graph, const GraphNode& node);

// A Gather (constant 1-D indices) or Slice of a 4-D activation along its
// channels only: for each output channel, the input channel it copies (a
// step that runs in the activation's channel block, kChannelGather); else
// nullopt.
std::optional<std::vector<int64_t>> ChannelGatherOf(const Graph& graph, const GraphNode& node);

// What a Gemm's or MatMul's constant B (`b`, as the node has it) and C
// give the dense kernel of N outputs over K: B as [N, K] times alpha, and
// C as a row of N (one value per column, or one for all) times beta; a C
// of the output's shape is the epilogue's residual (GemmMatrixBias).
struct DenseOperands {
  std::vector<float> nk;
  std::vector<float> bias;  // empty: none
};
[[nodiscard]] absl::StatusOr<DenseOperands> DenseOperandsOf(const Graph& graph,
                                                            const GraphNode& node,
                                                            const std::vector<float>& b, int64_t n,
                                                            int64_t k);

// A Pad of all-zero pads: the same floats in the same order, so its output
// may name its input's buffer.
bool IsNoOpPad(const Graph& graph, const GraphNode& node);

// One input of a channel Concat as its producer wrote it.
struct ConcatPart {
  int64_t channels = 0;
  int64_t block = 1;  // its buffer's channel block (1: NCHW)
  int64_t elements = 0;
};
// The channel block a blocked Concat of `parts` joins them in: of the
// parts' own blocks, and those blocks' greatest common divisors with every
// part's channels where that is a multiple of 4 (whole vectors for the
// steps that read it), the one above 1 that divides every part's channels
// and leaves the fewest elements to relayout into it (the larger block,
// then the earlier part's, on a tie); 1 where there is none. GoogLeNet's
// inception4a joins 192 + 208 + 48 + 64 channels from NCHW32c and NCHW16c
// producers: NCHW16c, two parts relaid, not all four through NCHW.
int64_t ConcatBlock(const std::vector<ConcatPart>& parts);

// A channel Concat (axis 1) of 4-D tensors whose channels all divide by
// `block` > 1: the concat step over their NCHW[block]c buffers (rows W
// wide), which joins whole channel blocks; nullopt for any other Concat.
[[nodiscard]] absl::StatusOr<std::optional<LoweredTensorOp>> LowerBlockedConcat(
    const Graph& graph, const GraphNode& node, int64_t block);

// A model input's element type: float32, or integers (token ids);
// InvalidArgument naming the input for any other ONNX element type.
[[nodiscard]] absl::StatusOr<ElementType> InputElementType(const std::string& input, int dtype);

// A Transpose between NCHW and NHWC of a 4-D tensor: +1 for NCHW -> NHWC
// (perm 0,2,3,1), -1 for NHWC -> NCHW (perm 0,3,1,2), 0 for any other.
// NHWC is the memory of NCHW[C]c (one block of all C channels), so the
// plan makes either a view of the other (ConvNeXt's permutes).
int ChannelsLastTransposeOf(const Graph& graph, const GraphNode& node);

// A Gemm's C (input 2, a constant) broadcast to the output [M, N], times
// beta: what its epilogue adds when C is not a row (fuse_epilogues.h).
[[nodiscard]] absl::StatusOr<std::vector<float>> GemmMatrixBias(const Graph& graph,
                                                                const GraphNode& node);

// Split: per output (named), the strided copy of the input it is.
[[nodiscard]] absl::StatusOr<std::vector<std::pair<std::string, LoweredTensorOp>>> LowerSplit(
    const Graph& graph, const GraphNode& node);

// The axes a reduction reduces, sorted (empty: none, noop_with_empty_axes);
// InvalidArgument naming the node for axes that are not adjacent.
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> ReduceAxes(const Graph& graph,
                                                              const GraphNode& node,
                                                              const std::vector<int64_t>& in);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_TENSOR_OP_LOWERING_H_

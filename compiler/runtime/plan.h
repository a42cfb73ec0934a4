// The execution plan of a compiled model: the data `tunefleet compile`
// embeds in the model library and the runtime (model_runtime.h) executes.
// A plan is a list of buffers (activations, or constants inside the
// library's packed weight blob) and a list of steps over them, in order:
// tuned kernels (symbols of the library, common/kernel_abi.h) and the few
// operators the runtime implements itself (ops.h), in fp32.
//
// Layouts. An activation buffer of a 4-D tensor [N, C, H, W] is NCHW or
// channel-blocked NCHW[b]c, [N, C/b, H, row_width, b] with row_width >= W
// (a kernel may write rows wider than the image, the extra columns holding
// nothing anyone reads; today's blocked convolutions write rows exactly W
// wide).
// NCHW is block 1 with row_width W. Convolutions whose template computes
// blocked (conv2d_nchwc.x86, depthwise_conv2d_nchwc.x86) take and leave
// blocked buffers and read their weights already packed into the template's
// layout (packed when the model was compiled), so the plan calls only their
// timed entry; "relayout" steps convert where a consumer needs another
// layout (the graph's edges, a change of channel block).
//
//   TF_ASSIGN_OR_RETURN(ModelPlan plan, ModelPlan::FromJson(text));
//   for (const PlanStep& step : plan.steps) ...
//
// Travels as JSON text (the symbol tf_model_plan), so a plan written by one
// build of the compiler reads the same in any runtime of the same
// kPlanVersion.
#ifndef TUNEFLEET_COMPILER_RUNTIME_PLAN_H_
#define TUNEFLEET_COMPILER_RUNTIME_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tunefleet {

inline constexpr int kPlanVersion = 4;

// Symbols every model library exports.
inline constexpr char kPlanSymbol[] = "tf_model_plan";        // NUL-terminated JSON
inline constexpr char kWeightsSymbol[] = "tf_model_weights";  // 64-byte aligned floats

struct PlanBuffer {
  std::string tensor;            // the ONNX tensor it holds (for messages)
  int64_t elements = 0;          // fp32 count
  int64_t constant_offset = -1;  // >= 0: a constant at this float offset of the weights
  // Activations: the tensor's ONNX dims and, for 4-D ones, the layout.
  std::vector<int64_t> shape;
  int64_t block = 1;      // channels per block (1: NCHW)
  int64_t row_width = 0;  // floats per row per channel lane; 0: the tensor's W
  // An activation that lies inside another (a concatenation's input written
  // in place, passes/alias_concats.h): floats [alias_offset, alias_offset +
  // elements) of buffer alias_of, which is no alias itself; -1: its own.
  int alias_of = -1;
  int64_t alias_offset = 0;

  bool is_constant() const { return constant_offset >= 0; }
  bool is_4d() const { return shape.size() == 4; }
  int64_t RowWidth() const { return row_width > 0 ? row_width : (is_4d() ? shape[3] : 1); }
  // NCHW (or not 4-D): the ONNX tensor's own order.
  bool is_plain() const { return !is_4d() || (block == 1 && RowWidth() == shape[3]); }
};

// What a model input holds. Its buffer is always fp32: integer inputs
// (token ids) are converted as they are copied in, and must be exact in
// fp32 (|v| <= 2^24). Codes are ONNX's TensorProto element types, as in
// the C API (tunefleet_model.h TF_DTYPE_*).
enum class ElementType { kFloat32 = 1, kInt32 = 6, kInt64 = 7 };
const char* ElementTypeName(ElementType type);  // "float32", "int32", "int64"

// A model input or output: its buffer and NCHW (ONNX) shape.
struct PlanTensor {
  std::string name;
  int buffer = -1;
  std::vector<int64_t> shape;
  ElementType type = ElementType::kFloat32;
};

// A function of one value, applied to every element: a "pointwise" step,
// or the activation a kernel's epilogue ends with. Parameters:
//   kClip: alpha = min, beta = max (either may be infinite);
//   kHardSigmoid: max(0, min(1, alpha x + beta)); kHardSwish: x times that;
//   kLeakyRelu: x < 0 ? alpha x : x; kElu: x < 0 ? alpha (e^x - 1) : x.
enum class PointwiseFunc {
  kNone,  // identity
  kRelu,
  kClip,
  kSqrt,
  kExp,
  kErf,
  kTanh,
  kSigmoid,
  kNeg,
  kHardSigmoid,
  kHardSwish,
  kLeakyRelu,
  kElu,
  kAbs,
  kFloor,
  kCeil,
  kReciprocal,
  kGelu,      // x * (1 + erf(x / sqrt 2)) / 2
  kGeluTanh,  // x * (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2
  kSilu,      // x * sigmoid(x)
};

struct Activation {
  PointwiseFunc func = PointwiseFunc::kNone;
  float alpha = 0, beta = 0;

  bool empty() const { return func == PointwiseFunc::kNone; }
};

// f(a, b) of a "broadcast" step; kPrelu: a < 0 ? a * b : a; kMod: C's
// fmod; kFloorMod: the remainder with the divisor's sign (ONNX Mod, fmod 0);
// kSelect: b unless it is NaN, else a (a Where with a constant condition:
// passes/lower_where.h).
enum class BinaryFunc {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kPrelu,
  kMax,
  kMin,
  kMod,
  kFloorMod,
  kSelect
};

// What a "reduce" step computes over its axis.
enum class ReduceFunc { kMean, kSum, kMax, kMin };

// How a "pad" step fills what lies outside its input (ONNX Pad's modes).
enum class PadMode { kConstant, kReflect, kEdge };

// What a step does. The plan's JSON spells these as the names StepOpName
// gives; a name the runtime does not know is refused when the plan loads.
enum class StepOp {
  kKernel,    // a tuned kernel (symbol), then its epilogue
  kRelayout,  // the input buffer's layout -> the output's (same dims)
  kCopy,      // the same floats into a buffer of another shape
  kMaxPool,   // pooling reads and writes its buffers' layouts (same block)
  kAvgPool,
  kGlobalAvgPool,  // any block in, [N, C] out
  kAdd,            // two buffers of one layout, element by element
  kPointwise,      // activation.func on every element, any layout
  kSoftmax,        // the middle axis of [outer, axis, inner] (in_shape); with a second
                   // input (inner 1): softmax(in + it) along out_shape's last axis, it
                   // read through b_strides
  // Tensor operators on plain row-major buffers (ops.h RunTensorOp), all
  // iterating over out_shape:
  kStridedCopy,    // out[i] = in[a_offset + sum_d i_d * a_strides[d]] (Transpose, Slice)
  kBroadcast,      // out[i] = binary(a[.. a_strides], b[.. b_strides]); stride 0 on broadcast dims
  kReduce,         // `reduce` over the middle axis of [outer, axis, inner] (in_shape)
  kConcat,         // inputs joined along an axis: in_shape [outer, inner, each input's extent]
  kBatchNorm,      // inference BatchNormalization per channel of [N, C, inner] (in_shape),
                   // in x's layout (a 4-D x may be blocked); inputs x, scale, B, mean,
                   // var; alpha: epsilon; then `activation`
  kPad,            // in_shape padded by pads (every axis' begin, then every axis' end) into
                   // out_shape, filled per pad_mode (kConstant: with alpha); with
                   // strides (kConstant), input positions that far apart (a spread input)
  kGather,         // [outer, n, inner] (in_shape) at `indices` along n: [outer, indices, inner]
  kChannelBinary,  // binary(a, b[n, c]) for a 4-D a in any layout (out: a's layout) and b
                   // one value per channel (in_shape [N or 1, C]): a squeeze-excite scale
  kChannelGather,  // out channel c = in channel indices[c] of a 4-D in (in_shape) in any
                   // layout, into out's (out_shape): a channel Slice, Gather or shuffle
  kScaleWeights,   // a blocked convolution's packed weights [K/ob][C/ib][R*S][ib][ob]
                   // (in_shape {K/ob, C/ib, R*S, ib, ob}) times s[c] along their input
                   // channels: inputs {weights, s}; a squeeze-excite scale the kernel's
                   // input no longer needs (passes/fold_channel_scales.h)
  kLayerNorm,      // each row of [outer, inner] (in_shape) normalised (alpha: epsilon), then
                   // times inputs[1] and plus inputs[2] (per position of the row) when given;
                   // in_shape [outer, inner, C] (instance norm): per row, at row % C
  kResize,         // in_shape resampled to out_shape (same rank): along each axis d, output
                   // position o is sum_t weights[t] * x[indices[t]] over its T taps (T
                   // indices and weights per position, axis after axis: 2 nearest and
                   // linear, 4 cubic); taps of -1: the output there is alpha (outside
                   // a crop)
};

// "kernel", "relayout", ... as plans spell them; ParseStepOp is its inverse
// (InvalidArgument naming an unknown name).
const char* StepOpName(StepOp op);
[[nodiscard]] absl::StatusOr<StepOp> ParseStepOp(const std::string& name);
const char* PointwiseFuncName(PointwiseFunc func);
[[nodiscard]] absl::StatusOr<PointwiseFunc> ParsePointwiseFunc(const std::string& name);
const char* BinaryFuncName(BinaryFunc func);
[[nodiscard]] absl::StatusOr<BinaryFunc> ParseBinaryFunc(const std::string& name);
const char* ReduceFuncName(ReduceFunc func);
[[nodiscard]] absl::StatusOr<ReduceFunc> ParseReduceFunc(const std::string& name);
const char* PadModeName(PadMode mode);
[[nodiscard]] absl::StatusOr<PadMode> ParsePadMode(const std::string& name);

// What runs after a kernel, in place on its output [outer, channels, inner]:
// y = act(y + bias[c] + residual).
struct PlanEpilogue {
  int bias = -1;      // constant buffer of `channels` floats, or -1
  int residual = -1;  // buffer of the output's size, or -1
  Activation activation;
  int64_t channels = 1;
  int64_t inner = 1;  // positions per channel block per image (H*row_width; 1 for dense)
  int64_t block = 1;  // the output's channel block (1: NCHW / dense)
  // The kernel applies it through its epilogue hook, region by region as
  // it finishes them (common/kernel_abi.h), instead of a pass after it.
  bool in_kernel = false;
  // The kernel computes it in its final stores (toolchain/passes/
  // fuse_epilogue.h), reading the bias and the residual from pointers after
  // its hook's; no pass after it, no hook.
  bool in_stores = false;

  bool empty() const { return bias < 0 && residual < 0 && activation.empty(); }
};

struct PlanStep {
  StepOp op = StepOp::kCopy;
  std::string node;    // the ONNX node (the first, when several were fused)
  std::string symbol;  // kernel: its entry symbol
  std::vector<int> inputs;
  std::vector<int> outputs;
  // kernel: when not empty, the buffers passed as its staged buffers
  // (common/kernel_abi.h) and only its entry runs; when empty, the runtime
  // owns the staged buffers and runs prepare, entry and finish.
  std::vector<int> staged;
  std::vector<int64_t> in_shape, out_shape;  // NCHW for pooling; softmax: [outer, axis, inner]
  // Pooling window (a direct blocked convolution kernel: its R, S and its
  // packed weights' input-channel block in kernel_shape).
  std::vector<int64_t> kernel_shape, strides, pads;  // pooling's pads: top, left, bottom, right
  std::vector<int64_t> dilations;                    // pooling: rows, columns (empty: 1, 1)
  bool count_include_pad = false;
  PlanEpilogue epilogue;
  Activation activation;                  // kPointwise
  BinaryFunc binary = BinaryFunc::kAdd;   // kBroadcast
  ReduceFunc reduce = ReduceFunc::kMean;  // kReduce
  PadMode pad_mode = PadMode::kConstant;  // kPad
  float alpha = 0;                        // kBatchNorm: epsilon; kPad: the constant
  std::vector<int64_t> a_strides, b_strides;
  int64_t a_offset = 0;
  std::vector<int64_t> indices;  // kGather, each in [0, in_shape[1]); kResize (above)
  std::vector<float> weights;    // kResize: one per index
};

struct ModelPlan {
  int version = kPlanVersion;
  std::string target;  // the target string it was compiled for
  std::string triple;
  // x86 features the kernels use, as /proc/cpuinfo spells them ("avx2", "fma", "avx512f").
  std::vector<std::string> required_features;
  std::vector<PlanTensor> inputs, outputs;
  std::vector<PlanBuffer> buffers;
  std::vector<PlanStep> steps;
  int64_t weight_floats = 0;

  nlohmann::json ToJson() const;
  // InvalidArgument naming the bad field, or a plan of another version.
  [[nodiscard]] static absl::StatusOr<ModelPlan> FromJson(const std::string& text);
};

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_RUNTIME_PLAN_H_

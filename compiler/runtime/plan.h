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

inline constexpr int kPlanVersion = 2;

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

  bool is_constant() const { return constant_offset >= 0; }
  bool is_4d() const { return shape.size() == 4; }
  int64_t RowWidth() const { return row_width > 0 ? row_width : (is_4d() ? shape[3] : 1); }
  // NCHW (or not 4-D): the ONNX tensor's own order.
  bool is_plain() const { return !is_4d() || (block == 1 && RowWidth() == shape[3]); }
};

// A model input or output: its buffer and NCHW (ONNX) shape.
struct PlanTensor {
  std::string name;
  int buffer = -1;
  std::vector<int64_t> shape;
};

// What runs after a kernel, in place on its output [outer, channels, inner]:
// y = act(y + bias[c] + residual).
struct PlanEpilogue {
  int bias = -1;                    // constant buffer of `channels` floats, or -1
  int residual = -1;                // buffer of the output's size, or -1
  std::string activation = "none";  // "none" | "relu" | "clip"
  float clip_min = 0, clip_max = 0;
  int64_t channels = 1;
  int64_t inner = 1;  // positions per channel block per image (H*row_width; 1 for dense)
  int64_t block = 1;  // the output's channel block (1: NCHW / dense)

  bool empty() const { return bias < 0 && residual < 0 && activation == "none"; }
};

struct PlanStep {
  // "kernel", "max_pool", "avg_pool", "global_avg_pool", "add", "relu",
  // "clip", "softmax", "copy", "relayout" (input buffer's layout -> output's).
  // Pooling reads and writes its buffers' layouts (the same block);
  // elementwise steps see buffers of one layout.
  // Tensor operators on plain row-major buffers (ops.h RunTensorOp), all
  // iterating over out_shape:
  //   "strided_copy": out[i] = in[a_offset + sum_d i_d * a_strides[d]]
  //     (Transpose, Slice);
  //   "broadcast": out[i] = func(a[.. a_strides], b[.. b_strides]), func
  //     "add" | "sub" | "mul" | "div" | "pow" (stride 0 on broadcast dims);
  //   "unary": func "sqrt" | "exp" | "erf" | "tanh" | "sigmoid" | "neg" | "relu" |
  //     "hardsigmoid" (max(0, min(1, alpha x + beta))) | "hardswish" (x times that);
  //   "reduce_mean": the middle axis of [outer, axis, inner] (in_shape);
  //   "concat": the inputs joined along an axis, in_shape [outer, inner,
  //     each input's extent along the axis];
  //   "batch_norm": inference BatchNormalization per channel of [N, C, ...]
  //     (in_shape [N, C, inner]; inputs x, scale, B, mean, var; alpha: epsilon).
  std::string op;
  std::string node;    // the ONNX node (the first, when several were fused)
  std::string symbol;  // kernel: its entry symbol
  std::vector<int> inputs;
  std::vector<int> outputs;
  // kernel: when not empty, the buffers passed as its staged buffers
  // (common/kernel_abi.h) and only its entry runs; when empty, the runtime
  // owns the staged buffers and runs prepare, entry and finish.
  std::vector<int> staged;
  std::vector<int64_t> in_shape, out_shape;  // NCHW for pooling; softmax: [outer, axis, inner]
  // Pooling window.
  std::vector<int64_t> kernel_shape, strides, pads;  // pads: top, left, bottom, right
  bool count_include_pad = false;
  float clip_min = 0, clip_max = 0;
  PlanEpilogue epilogue;
  // Tensor operators (above); absent from plans of older compilers.
  std::string func;
  float alpha = 0, beta = 0;  // "hardsigmoid" / "hardswish"; "batch_norm": alpha = epsilon
  std::vector<int64_t> a_strides, b_strides;
  int64_t a_offset = 0;
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

// From an imported ONNX graph and the kernels chosen for its tuned layers to
// a compiled model's plan (compiler/runtime/plan.h): one buffer per tensor,
// one step per operator, with these done at compile time:
//  - BatchNormalization after a convolution folded into its weights and bias;
//  - a convolution's or Gemm's bias, a following residual Add and Relu/Clip
//    fused into the kernel's epilogue (y = act(conv + bias + residual));
//  - Flatten/Reshape/Identity/Dropout as aliases of their input buffer;
//  - every constant the kernels read (packed weights for blocked kernels
//    and for dense kernels that pack B once, kernel_packing.h; [K, C, R, S]
//    / [N, K] for the others) in one float blob.
//  - shape arithmetic (Shape/Gather/Concat/... on constants) folded away
//    (constant_folding.h), and shapes inference left unknown filled in;
//  - a MatMul's constant bias row Add folded into its dense kernel's bias.
// Batched MatMul runs on the tuned batch_matmul kernel; Transpose, Slice,
// broadcasting arithmetic, unary math, ReduceMean and Softmax become
// runtime tensor-operator steps on plain buffers (tensor_op_lowering.h).
// Blocked convolutions (kernel_packing.h) take and leave NCHW[x]c buffers
// and read weights packed here into their kernel_vec layout, so only their
// timed entry runs; "relayout" steps sit only where a consumer needs another
// layout: the graph's input and outputs, a change of channel block, and
// before operators that read NCHW (dense, softmax, reshapes). Pooling and
// elementwise operators run in whatever layout their input has.
//
//   TF_ASSIGN_OR_RETURN(BuiltPlan built, BuildPlan(graph, layers, choose));
#ifndef TUNEFLEET_COMPILER_PLAN_BUILDER_H_
#define TUNEFLEET_COMPILER_PLAN_BUILDER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/kernel_choice.h"
#include "compiler/runtime/plan.h"
#include "tuner_core/graph/graph.h"
#include "tuner_core/models/model_zoo.h"

namespace tunefleet {

// One kernel to compile: the task, its config and the symbol it exports.
struct KernelToBuild {
  std::string symbol;
  KernelChoice choice;
  std::vector<std::string> nodes;  // the graph nodes it serves
};

struct BuiltPlan {
  ModelPlan plan;
  std::vector<float> weights;
  std::vector<KernelToBuild> kernels;  // one per distinct (template, workload, config)
};

// Chooses the kernel of one tuned layer (ChooseKernel bound to records and target).
using ChooseKernelFn = std::function<absl::StatusOr<KernelChoice>(const ModelLayer& layer)>;

// The operators BuildPlan accepts, for messages.
const std::vector<std::string>& SupportedOperators();

// InvalidArgument naming the node for an unsupported operator (or an
// unsupported use of a supported one: grouped convolution, weights that are
// not constants, a broadcasting Add, ...).
[[nodiscard]] absl::StatusOr<BuiltPlan> BuildPlan(const Graph& graph,
                                                  const std::vector<ModelLayer>& layers,
                                                  const ChooseKernelFn& choose);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PLAN_BUILDER_H_

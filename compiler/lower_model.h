// `tunefleet compile`'s middle: an imported ONNX graph and the kernels
// chosen for its tuned layers to a compiled model's plan, as a list of
// passes (each in compiler/passes/ with its own test; shape completion is
// tuner_core's, which model loading runs too):
//
//   complete shapes: fold constants and shape arithmetic, infer the
//   shapes left unknown, in turn         (tuner_core/graph/infer_shapes.h)
//   recognise GELU, SiLU, LayerNorm      (passes/fuse_patterns.h)
//   masks (Where, constant condition) as select steps
//                                        (passes/lower_where.h)
//   fold BatchNorm into convolutions     (passes/fold_batch_norm.h)
//   fold layer scales into MatMuls       (passes/fold_layer_scale.h)
//   fuse epilogues into kernels          (passes/fuse_epilogues.h)
//   emit the plan: kernels, runtime operators, relayouts, packed weights
//                                        (passes/emit_plan.h)
//   write concatenations' inputs in place (passes/alias_concats.h)
//   read channel slices in place         (passes/alias_slices.h)
//   a strided copy of a strided copy as one
//                                        (passes/compose_strided_copies.h)
//   fold squeeze-excite scales into the next convolution's weights
//                                        (passes/fold_channel_scales.h)
//
// Which operators exist and how each lowers is the operator table's
// (operator_table.h); layouts are chosen before (layout_choice.h), buffers
// placed when the plan loads (runtime/model_runtime.h PlanArena).
//
//   TF_ASSIGN_OR_RETURN(BuiltPlan built, LowerModel(graph, layers, choose));
#ifndef TUNEFLEET_COMPILER_LOWER_MODEL_H_
#define TUNEFLEET_COMPILER_LOWER_MODEL_H_

#include <vector>

#include "absl/status/statusor.h"
#include "compiler/passes/emit_plan.h"
#include "tuner_core/graph/graph.h"
#include "tuner_core/models/model_zoo.h"

namespace tunefleet {

struct LowerOptions {
  // Off for layout choice, which reads each concatenation's inputs' and
  // each slice's layouts off their steps: concatenations and channel slices
  // stay steps, not views.
  bool alias_concats = true;
};

// Errors name the node and what is wrong with it (emit_plan.h).
[[nodiscard]] absl::StatusOr<BuiltPlan> LowerModel(const Graph& graph,
                                                   const std::vector<ModelLayer>& layers,
                                                   const ChooseKernelFn& choose,
                                                   const LowerOptions& options = {});

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_LOWER_MODEL_H_

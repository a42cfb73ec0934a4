#include "compiler/lower_model.h"

#include <map>
#include <string>

#include "common/status_macros.h"
#include "compiler/passes/alias_concats.h"
#include "compiler/passes/alias_slices.h"
#include "compiler/passes/compose_strided_copies.h"
#include "compiler/passes/fold_batch_norm.h"
#include "compiler/passes/fold_channel_scales.h"
#include "compiler/passes/fold_layer_scale.h"
#include "compiler/passes/fuse_epilogues.h"
#include "compiler/passes/fuse_patterns.h"
#include "compiler/passes/fuse_softmax_bias.h"
#include "compiler/passes/lower_where.h"
#include "tuner_core/graph/infer_shapes.h"

namespace tunefleet {
namespace {

// What each tuned layer's kernel can fuse after it, and each 4-D
// BatchNormalization that no kernel absorbed (it runs in its input's
// layout, and takes the activation after it).
std::map<std::string, EpilogueKind> EpilogueKinds(const Graph& graph,
                                                  const std::vector<ModelLayer>& layers) {
  std::map<std::string, EpilogueKind> kinds;
  for (const GraphNode& node : graph.nodes) {
    if (node.op_type == "BatchNormalization" && !node.inputs.empty() &&
        graph.ShapeOf(node.inputs[0]).value_or(TensorShape()).dims.size() == 4) {
      kinds[node.name] = EpilogueKind::kActivation;
    }
  }
  for (const ModelLayer& layer : layers) {
    kinds[layer.name] = layer.workload == "dense"          ? EpilogueKind::kRows
                        : layer.workload == "batch_matmul" ? EpilogueKind::kNone
                                                           : EpilogueKind::kChannels;
  }
  return kinds;
}

}  // namespace

[[nodiscard]] absl::StatusOr<BuiltPlan> LowerModel(const Graph& graph,
                                                   const std::vector<ModelLayer>& layers,
                                                   const ChooseKernelFn& choose,
                                                   const LowerOptions& options) {
  TF_ASSIGN_OR_RETURN(Graph lowered, CompleteShapes(graph));
  TF_RETURN_IF_ERROR(FusePatterns(&lowered));
  TF_RETURN_IF_ERROR(LowerConstantWheres(&lowered));
  TF_RETURN_IF_ERROR(FoldBatchNorm(&lowered));
  FoldLayerScale(&lowered);
  TF_ASSIGN_OR_RETURN(EpilogueFusion fusion,
                      FuseEpilogues(lowered, EpilogueKinds(lowered, layers)));
  TF_ASSIGN_OR_RETURN(BuiltPlan built, EmitPlan(lowered, layers, fusion, choose));
  if (options.alias_concats) {
    AliasConcatInputs(&built.plan);
    AliasChannelSlices(&built.plan);
  }
  ComposeStridedCopies(&built.plan);
  FuseSoftmaxBias(&built.plan);
  FoldChannelScales(&built.plan);
  return built;
}

}  // namespace tunefleet

#include "compiler/lower_model.h"

#include <map>
#include <string>

#include "common/status_macros.h"
#include "compiler/passes/fold_batch_norm.h"
#include "compiler/passes/fuse_epilogues.h"
#include "compiler/passes/fuse_patterns.h"
#include "tuner_core/graph/infer_shapes.h"

namespace tunefleet {
namespace {

// What each tuned layer's kernel can fuse after it.
std::map<std::string, EpilogueKind> EpilogueKinds(const std::vector<ModelLayer>& layers) {
  std::map<std::string, EpilogueKind> kinds;
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
                                                   const ChooseKernelFn& choose) {
  TF_ASSIGN_OR_RETURN(Graph lowered, CompleteShapes(graph));
  TF_RETURN_IF_ERROR(FusePatterns(&lowered));
  TF_RETURN_IF_ERROR(FoldBatchNorm(&lowered));
  TF_ASSIGN_OR_RETURN(EpilogueFusion fusion, FuseEpilogues(lowered, EpilogueKinds(layers)));
  return EmitPlan(lowered, layers, fusion, choose);
}

}  // namespace tunefleet

// The last pass of lower_model.h: from the graph the earlier passes left
// (constants folded, shapes known, BatchNorm folded) and its epilogue
// fusion to a compiled model's plan (compiler/runtime/plan.h): one buffer
// per tensor, one step per operator the operator table lowers, with
//  - the kernel of each tuned layer (ChooseKernelFn), its bias and fused
//    epilogue (y = act(kernel + bias + residual));
//  - Flatten/Reshape/Identity/Dropout/Squeeze/Unsqueeze as aliases of
//    their input buffer;
//  - every constant the kernels read (packed weights for blocked kernels
//    and for dense kernels that pack B once, kernel_packing.h; [K, C, R, S]
//    / [N, K] for the others) in one float blob.
// Blocked convolutions (kernel_packing.h) take and leave NCHW[x]c buffers
// and read weights packed here into their kernel_vec layout, so only their
// timed entry runs; relayout steps sit only where a consumer needs another
// layout: the graph's input and outputs, a change of channel block that the
// consumer's kernel cannot read as it is at no extra cost (kernel_packing.h
// ReadsBlockAtNoCost: it is then built to read it, the workload's
// in_block), and before operators that read NCHW (dense, tensor operators,
// reshapes).
// Pooling, Add and pointwise functions run in whatever layout their input
// has.
//
//   TF_ASSIGN_OR_RETURN(BuiltPlan built, EmitPlan(graph, layers, fusion, choose));
#ifndef TUNEFLEET_COMPILER_PASSES_EMIT_PLAN_H_
#define TUNEFLEET_COMPILER_PASSES_EMIT_PLAN_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/kernel_choice.h"
#include "compiler/passes/fuse_epilogues.h"
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

// InvalidArgument naming the node for an unsupported operator or attribute
// (operator_table.h), or an unsupported use of a supported one: a Conv that
// is no task's shape, weights that are not constants, ...
[[nodiscard]] absl::StatusOr<BuiltPlan> EmitPlan(const Graph& graph,
                                                 const std::vector<ModelLayer>& layers,
                                                 const EpilogueFusion& fusion,
                                                 const ChooseKernelFn& choose);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_EMIT_PLAN_H_

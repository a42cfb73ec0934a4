// Epilogue fusion: what follows a tuned kernel's output and runs in the
// kernel's epilogue instead of as steps of its own (y = act(y + bias +
// residual)): for a dense kernel, the Add of a constant row (a MatMul's
// bias); an Add of another tensor of the output's shape computed before
// the kernel runs (a residual); then one pointwise activation of the
// operator table (Relu, Clip, Sigmoid, HardSwish, ...). Each fused node is
// the sole reader of what it consumes, in that order. A Gemm's C that is
// not a row (a matrix) takes the residual's place.
//
//   EpilogueFusion fusion = FuseEpilogues(graph, epilogue_kinds);
//   const FusedEpilogue& e = fusion.by_kernel.at("conv1");  // e.output: the tensor it writes
#ifndef TUNEFLEET_COMPILER_PASSES_FUSE_EPILOGUES_H_
#define TUNEFLEET_COMPILER_PASSES_FUSE_EPILOGUES_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/runtime/plan.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

// What a kernel's epilogue can take.
enum class EpilogueKind {
  kNone,        // nothing (batched matmul)
  kActivation,  // an activation only (a BatchNormalization left after folding)
  kChannels,    // residual and activation (convolutions)
  kRows,        // also constant bias rows (dense)
};

struct FusedEpilogue {
  std::string output;                  // the tensor the kernel's buffer finally holds
  std::vector<std::string> bias_rows;  // constants to add to the kernel's bias
  std::string residual;                // the tensor added (a Gemm's constant C), or empty
  Activation activation;
};

struct EpilogueFusion {
  std::map<std::string, FusedEpilogue> by_kernel;  // kernel node name -> its epilogue
  std::set<size_t> fused_nodes;                    // indices of the nodes it absorbed
};

// `kinds`: the kernel nodes (by name) and what their epilogues take; other
// nodes are not kernels. InvalidArgument naming an activation node whose
// parameters are not constants.
[[nodiscard]] absl::StatusOr<EpilogueFusion> FuseEpilogues(
    const Graph& graph, const std::map<std::string, EpilogueKind>& kinds);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_FUSE_EPILOGUES_H_

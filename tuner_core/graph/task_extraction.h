// Task extraction: the tunable operators of a Graph as the model's layers
// (workload + canonical args, the same shapes tuner_core/models lists for the
// built-in models), and every other operator counted with why it is not
// tuned.
//
//   absl::StatusOr<GraphLayers> layers = ExtractLayers(graph);
//   std::vector<ModelTask> tasks = GroupLayers(layers->layers);
//
// Mapping (fp32 only):
//   Conv 2-D, group 1                     -> conv2d_nchw (layout NCHWc)
//   Conv 2-D, group = C_in = C_out        -> depthwise_conv2d_nchw
//   Conv, any other grouping / rank       -> not tuned, with the reason
//   Gemm (transA = 0)                     -> dense {M, N, K} (weights [N, K])
//   MatMul, 2-D weights                   -> dense, M = all leading dims of A
//   MatMul, both operands batched alike   -> batch_matmul {B, M, N, K}, layout KN
// A tunable operator whose shapes are unknown is an InvalidArgument naming the
// node; the operators not tuned (Relu, Add, pooling, ...) are only counted.
#ifndef TUNEFLEET_TUNER_CORE_GRAPH_TASK_EXTRACTION_H_
#define TUNEFLEET_TUNER_CORE_GRAPH_TASK_EXTRACTION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/graph/graph.h"
#include "tuner_core/models/model_zoo.h"

namespace tunefleet {

// Operators not tuned, by op type and reason (e.g. "Relu": "not a tunable
// operator", "Conv": "grouped convolution (group=2)").
struct UntunedOperators {
  std::string op_type;
  std::string reason;
  int count = 0;
  std::vector<std::string> nodes;
};

struct GraphLayers {
  std::vector<ModelLayer> layers;         // the tunable nodes, in graph order
  std::vector<UntunedOperators> untuned;  // in order of first appearance
};

[[nodiscard]] absl::StatusOr<GraphLayers> ExtractLayers(const Graph& graph);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_GRAPH_TASK_EXTRACTION_H_

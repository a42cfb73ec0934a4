// From an ONNX pooling node (MaxPool, AveragePool, and a kept ReduceMean
// over a 4-D tensor's spatial axes, which is global average pooling) to the
// window of a runtime pooling step (plan.h): kernel, strides, dilations and
// pads with auto_pad resolved; a 1-D window runs as a 2-D one a row tall.
//
//   TF_RETURN_IF_ERROR(PoolWindowOf(node, in.dims, out.dims, step));
//   step.in_shape = PoolDims2d(in.dims);
#ifndef TUNEFLEET_COMPILER_POOL_LOWERING_H_
#define TUNEFLEET_COMPILER_POOL_LOWERING_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/runtime/plan.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

// `dims` of a 1-D pooling's [N, C, W] as the [N, C, 1, W] it runs as.
std::vector<int64_t> PoolDims2d(std::vector<int64_t> dims);

// Sets step's kernel_shape, strides, pads, dilations (empty when all 1)
// and count_include_pad from the node's attributes, for input and output
// dims `in` and `out` ([N, C, spatial...], 1-D or 2-D); InvalidArgument
// naming the node for attributes that do not fit.
[[nodiscard]] absl::Status PoolWindowOf(const GraphNode& node, const std::vector<int64_t>& in,
                                        const std::vector<int64_t>& out, PlanStep& step);

// The pooling step of `node` (no buffers yet): its op, window, and in/out
// shapes as the 2-D [N, C, H, W] it runs on; InvalidArgument naming the
// node for 3-D pooling or MaxPool's Indices output.
[[nodiscard]] absl::StatusOr<PlanStep> PoolStepOf(const Graph& graph, const GraphNode& node);

// Whether `node` is a ReduceMean over axes 2 and 3 of a 4-D tensor, kept
// or not (ShuffleNet's x.mean([2, 3]): [N, C], the floats of [N, C, 1, 1]):
// global average pooling, which reads any channel block.
bool IsSpatialMean(const Graph& graph, const GraphNode& node);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_POOL_LOWERING_H_

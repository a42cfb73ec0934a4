// What ONNX's attributes and constant inputs say about shapes, worked out
// once for everything that reads them (shape completion here, the
// compiler's lowerings): a Slice's window, a Pad's pads, an operator's
// integer constant input.
//
//   TF_ASSIGN_OR_RETURN(SliceWindow w, SliceWindowOf(graph, node, in_dims));
#ifndef TUNEFLEET_TUNER_CORE_GRAPH_STATIC_SHAPES_H_
#define TUNEFLEET_TUNER_CORE_GRAPH_STATIC_SHAPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

// InvalidArgument "node 'conv1' (Conv): <what>".
[[nodiscard]] absl::Status NodeError(const GraphNode& node, const std::string& what);

// The values of integer constant input `i` (empty when the input is
// omitted); InvalidArgument naming the node when it is not a constant.
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> IntsInput(const Graph& graph,
                                                             const GraphNode& node, size_t i);

// `axis` of a tensor of `rank` dims (negative: counted from the end) as an
// index in [0, rank); InvalidArgument naming the node when it is outside.
[[nodiscard]] absl::StatusOr<int64_t> AxisOf(const GraphNode& node, int64_t axis, int64_t rank);

// numpy broadcasting of two shapes, or nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> BroadcastShapes(std::vector<int64_t> a, std::vector<int64_t> b);

// Row-major strides of `dims`.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);

// For each position of a row-major tensor of dims `out`, the flat index it
// reads in a tensor of dims `dims` that broadcasts to `out` (numpy's rule).
std::vector<int64_t> BroadcastIndices(const std::vector<int64_t>& dims,
                                      const std::vector<int64_t>& out);

// A Slice (constant starts, ends, axes, steps) of a row-major tensor of
// dims `in`: the output's dims, and where output index i reads the input:
// offset + sum_d i_d * strides[d].
struct SliceWindow {
  std::vector<int64_t> out_shape;
  int64_t offset = 0;
  std::vector<int64_t> strides;
};
[[nodiscard]] absl::StatusOr<SliceWindow> SliceWindowOf(const Graph& graph, const GraphNode& node,
                                                        const std::vector<int64_t>& in);

// A Pad's pads (input 1, or the attribute before opset 11) over all `rank`
// axes, as every axis' begin then every axis' end (opset 18's axes input
// names the axes they pad).
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> PadsOf(const Graph& graph, const GraphNode& node,
                                                          int64_t rank);

// A Resize's (or opset 9 Upsample's) scale per axis and output dims for an
// input of `in` dims: from its constant sizes (scale = out / in) or scales
// (out = floor(in * scale)); InvalidArgument naming the node when neither
// is a constant of the input's rank.
struct ResizeShape {
  std::vector<float> scales;
  std::vector<int64_t> out;
};
[[nodiscard]] absl::StatusOr<ResizeShape> ResizeShapeOf(const Graph& graph, const GraphNode& node,
                                                        const std::vector<int64_t>& in);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_GRAPH_STATIC_SHAPES_H_

// The model level's graph: named operators with the shapes of every tensor
// after shape inference, and the model's constant tensors (weights). ONNX
// import (onnx_import.h) produces one; task extraction (task_extraction.h)
// reads the tunable operators off it; compiling a model reads the rest.
//
//   absl::StatusOr<Graph> graph = ImportOnnxFile("resnet18.onnx", {});
//   for (const GraphNode& node : graph->nodes) { ... graph->ShapeOf(node.inputs[0]) ... }
//
// Shapes are static (every dimension known); dtype is ONNX's element type
// number (1 = float32, 7 = int64). Attributes are kept as JSON: ints and
// floats as numbers, lists as arrays, strings as strings.
#ifndef TUNEFLEET_TUNER_CORE_GRAPH_GRAPH_H_
#define TUNEFLEET_TUNER_CORE_GRAPH_GRAPH_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tunefleet {

inline constexpr int kOnnxFloat = 1;
inline constexpr int kOnnxInt32 = 6;
inline constexpr int kOnnxInt64 = 7;
inline constexpr int kOnnxBool = 9;

// Integer element types whose constants keep their values in `i64`.
inline bool IsIntegerDtype(int dtype) {
  return dtype == kOnnxInt64 || dtype == kOnnxInt32 || dtype == kOnnxBool;
}

// The most elements a tensor of a model may have (2^34: 64 GiB of floats).
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 34;

struct TensorShape {
  int dtype = kOnnxFloat;
  std::vector<int64_t> dims;

  // The product of dims, saturated at kMaxTensorElements + 1 (a crafted
  // shape never overflows; callers refuse anything above the cap).
  int64_t NumElements() const;
  std::string ToString() const;  // "[1, 3, 224, 224]"
};

// A constant tensor: float32 data in `f32`, integer data (int64, int32,
// bool) in `i64` (one of them); other element types keep only their shape.
struct ConstantTensor {
  TensorShape shape;
  std::vector<float> f32;
  std::vector<int64_t> i64;
};

struct GraphNode {
  std::string name;                 // unique in the graph (ONNX node name, or made up)
  std::string op_type;              // "Conv", "Gemm", "Relu", ...
  std::vector<std::string> inputs;  // tensor names; "" for an omitted optional input
  std::vector<std::string> outputs;
  nlohmann::json attributes = nlohmann::json::object();
};

struct Graph {
  std::string name;
  std::vector<std::string> inputs;  // graph inputs that are not constants
  std::vector<std::string> outputs;
  std::vector<GraphNode> nodes;                     // in topological order (ONNX's)
  std::map<std::string, TensorShape> shapes;        // every tensor with a known shape
  std::map<std::string, ConstantTensor> constants;  // initializers

  // The shape of `tensor`; InvalidArgument naming the tensor and, when given,
  // the node that needs it.
  [[nodiscard]] absl::StatusOr<TensorShape> ShapeOf(const std::string& tensor,
                                                    const GraphNode* user = nullptr) const;
  bool IsConstant(const std::string& tensor) const { return constants.count(tensor) > 0; }
};

// Why `tensor` has no shape (values false) or no constant value (values
// true): "; shape inference stops at node 'X' (Op, input shapes ...)", the
// first node up its producers whose inputs are all known but whose output
// is not; "" when the chain ends at a graph input. For error messages.
std::string WhereInferenceStops(const Graph& graph, std::string tensor, bool values);

// The attribute `name` of `node` as an int list / int / string, or `fallback`
// when the node does not set it.
std::vector<int64_t> IntsAttribute(const GraphNode& node, const std::string& name,
                                   std::vector<int64_t> fallback);
int64_t IntAttribute(const GraphNode& node, const std::string& name, int64_t fallback);
std::string StringAttribute(const GraphNode& node, const std::string& name, std::string fallback);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_GRAPH_GRAPH_H_

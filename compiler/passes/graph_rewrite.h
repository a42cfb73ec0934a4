// What the graph passes that fold constants into a node before them share:
// reading a float constant, adding a new one, and dropping folded nodes.
//
//   const ConstantTensor* w = FloatConstant(*graph, conv.inputs[1]);
//   conv.inputs[1] = AddConstant(graph, conv.name + ".folded_weight", std::move(scaled));
//   EraseNodes(graph, removed);
#ifndef TUNEFLEET_COMPILER_PASSES_GRAPH_REWRITE_H_
#define TUNEFLEET_COMPILER_PASSES_GRAPH_REWRITE_H_

#include <cstddef>
#include <set>
#include <string>

#include "tuner_core/graph/graph.h"

namespace tunefleet {

// The float32 constant `tensor` names, or null.
const ConstantTensor* FloatConstant(const Graph& graph, const std::string& tensor);

// Adds (or replaces) the constant `name` with its shape; returns `name`.
std::string AddConstant(Graph* graph, const std::string& name, ConstantTensor tensor);

// Drops the nodes at the indices in `removed`, keeping the others' order.
void EraseNodes(Graph* graph, const std::set<size_t>& removed);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_GRAPH_REWRITE_H_

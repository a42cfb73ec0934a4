// The one shape of a compile error about a graph node:
// "node 'conv1' (Conv): <what>".
#ifndef TUNEFLEET_COMPILER_NODE_ERROR_H_
#define TUNEFLEET_COMPILER_NODE_ERROR_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

// InvalidArgument naming the node and its operator.
[[nodiscard]] inline absl::Status NodeError(const GraphNode& node, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat("node '", node.name, "' (", node.op_type, "): ", what));
}

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_NODE_ERROR_H_

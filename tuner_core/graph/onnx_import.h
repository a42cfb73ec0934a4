// ONNX import: an .onnx file (Debian's libonnx: its protobuf schema and its
// C++ shape inference) to a Graph with every tensor's static shape.
//
//   OnnxImportOptions options;
//   options.input_shapes["input"] = {1, 3, 224, 224};   // for a dynamic batch
//   absl::StatusOr<Graph> graph = ImportOnnxFile("resnet18.onnx", options);
//
// Errors are InvalidArgument naming what is wrong: a file that is not ONNX
// (or is truncated), weights in external data files, a dynamic input
// dimension with no --input_shape for it, shape inference failing (with
// ONNX's message, which names the node), a node whose output shape stays
// unknown is not an error here (task extraction names it if it matters).
// Constant nodes become constants of the graph.
#ifndef TUNEFLEET_TUNER_CORE_GRAPH_ONNX_IMPORT_H_
#define TUNEFLEET_TUNER_CORE_GRAPH_ONNX_IMPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

// Largest .onnx file read (protobuf's own limit is 2 GiB).
inline constexpr int64_t kMaxOnnxFileBytes = int64_t{2} << 30;

struct OnnxImportOptions {
  // Shapes for graph inputs, by input name; required for inputs with a
  // dynamic (symbolic or unknown) dimension, checked against the others.
  std::map<std::string, std::vector<int64_t>> input_shapes;
};

[[nodiscard]] absl::StatusOr<Graph> ImportOnnxFile(const std::string& path,
                                                   const OnnxImportOptions& options);
// `source` names the bytes in errors (e.g. the file name).
[[nodiscard]] absl::StatusOr<Graph> ImportOnnxBytes(const std::string& bytes,
                                                    const std::string& source,
                                                    const OnnxImportOptions& options);

// "input=1,3,224,224;mask=1,128" -> {{"input", {1,3,224,224}}, {"mask", {1,128}}}.
// InvalidArgument naming the bad part.
[[nodiscard]] absl::StatusOr<std::map<std::string, std::vector<int64_t>>> ParseInputShapes(
    const std::string& text);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_GRAPH_ONNX_IMPORT_H_

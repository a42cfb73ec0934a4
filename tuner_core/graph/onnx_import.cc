#include "tuner_core/graph/onnx_import.h"

#include <cstring>
#include <exception>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

namespace tunefleet {
namespace {

// Static dims of a TypeProto, or nothing when any dimension is unknown.
bool StaticShapeOf(const onnx::TypeProto& type, TensorShape* shape) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return false;
  shape->dtype = type.tensor_type().elem_type();
  shape->dims.clear();
  for (const auto& dim : type.tensor_type().shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() <= 0) return false;
    shape->dims.push_back(dim.dim_value());
  }
  return true;
}

[[nodiscard]] absl::StatusOr<ConstantTensor> ConstantOf(const onnx::TensorProto& tensor,
                                                        const std::string& what) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " '", tensor.name(),
        "' keeps its data in an external file, which is not supported: export the model with "
        "its weights inside the .onnx file"));
  }
  ConstantTensor constant;
  constant.shape.dtype = tensor.data_type();
  for (int64_t d : tensor.dims()) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " '", tensor.name(), "' has a negative dimension ", d));
    }
    constant.shape.dims.push_back(d);
  }
  const int64_t n = constant.shape.NumElements();
  if (n > kMaxTensorElements) {
    return absl::InvalidArgumentError(absl::StrCat(what, " '", tensor.name(), "' of shape ",
                                                   constant.shape.ToString(), " is too large"));
  }
  const std::string& raw = tensor.raw_data();
  // raw_data, when set, holds n values of `width` bytes.
  auto check_raw = [&](int64_t width, const char* values) -> absl::Status {
    if (static_cast<int64_t>(raw.size()) == n * width) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(what, " '", tensor.name(), "': ", raw.size(),
                                                   " bytes of data for ", n, values));
  };
  if (tensor.data_type() == kOnnxFloat) {
    if (!raw.empty()) {
      TF_RETURN_IF_ERROR(check_raw(4, " float32 values"));
      constant.f32.resize(n);
      std::memcpy(constant.f32.data(), raw.data(), raw.size());
    } else {
      constant.f32.assign(tensor.float_data().begin(), tensor.float_data().end());
    }
  } else if (tensor.data_type() == kOnnxInt64) {
    if (!raw.empty()) {
      TF_RETURN_IF_ERROR(check_raw(8, " int64 values"));
      constant.i64.resize(n);
      std::memcpy(constant.i64.data(), raw.data(), raw.size());
    } else {
      constant.i64.assign(tensor.int64_data().begin(), tensor.int64_data().end());
    }
  } else if (tensor.data_type() == kOnnxInt32 || tensor.data_type() == kOnnxBool) {
    // Shape arithmetic and masks the compiler folds: kept as int64.
    const int64_t width = tensor.data_type() == kOnnxInt32 ? 4 : 1;
    if (!raw.empty()) {
      TF_RETURN_IF_ERROR(check_raw(width, " values"));
      for (int64_t i = 0; i < n; ++i) {
        if (width == 4) {
          int32_t v;
          std::memcpy(&v, raw.data() + i * 4, 4);
          constant.i64.push_back(v);
        } else {
          constant.i64.push_back(raw[i] != 0 ? 1 : 0);
        }
      }
    } else {
      constant.i64.assign(tensor.int32_data().begin(), tensor.int32_data().end());
    }
  }
  if (tensor.data_type() == kOnnxFloat || IsIntegerDtype(tensor.data_type())) {
    const size_t count =
        tensor.data_type() == kOnnxFloat ? constant.f32.size() : constant.i64.size();
    if (static_cast<int64_t>(count) != n) {
      return absl::InvalidArgumentError(absl::StrCat(what, " '", tensor.name(), "': ", count,
                                                     " values for shape ",
                                                     constant.shape.ToString()));
    }
  }
  // Other element types keep their shape only: nothing we tune reads them.
  return constant;
}

nlohmann::json AttributeValue(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto::INT:
      return a.i();
    case onnx::AttributeProto::FLOAT:
      return a.f();
    case onnx::AttributeProto::STRING:
      return a.s();
    case onnx::AttributeProto::INTS:
      return nlohmann::json(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case onnx::AttributeProto::FLOATS:
      return nlohmann::json(std::vector<float>(a.floats().begin(), a.floats().end()));
    case onnx::AttributeProto::STRINGS:
      return nlohmann::json(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case onnx::AttributeProto::TENSOR: {
      // A small tensor (ConstantOfShape's value): dtype, dims and values.
      absl::StatusOr<ConstantTensor> t = ConstantOf(a.t(), "tensor attribute");
      nlohmann::json j = {{"dtype", a.t().data_type()},
                          {"dims", std::vector<int64_t>(a.t().dims().begin(), a.t().dims().end())}};
      if (!t.ok()) return j;
      j["values"] = t->f32.empty() ? nlohmann::json(t->i64) : nlohmann::json(t->f32);
      return j;
    }
    default:
      return nlohmann::json(
          absl::StrCat("<", onnx::AttributeProto::AttributeType_Name(a.type()), ">"));
  }
}

// A batch the user's shapes changed from what the export fixed, and the
// outputs whose first dimension was that batch (so must follow it).
struct BatchChange {
  int64_t from = 0, to = 0;
  std::vector<std::string> outputs;
};

// Sets the shapes the user gave and refuses dynamic dimensions without one.
// A given shape may change a dimension the export fixed (batch 8 of a model
// exported at batch 1): the exporter's intermediate and output shapes are
// then dropped and shape inference works them out anew (a Reshape whose
// target the export baked in then fails naming its node).
[[nodiscard]] absl::StatusOr<BatchChange> FixInputShapes(onnx::GraphProto* graph,
                                                         const std::set<std::string>& initializers,
                                                         const OnnxImportOptions& options) {
  std::set<std::string> used;
  bool changed = false;
  BatchChange batch;
  for (onnx::ValueInfoProto& input : *graph->mutable_input()) {
    if (initializers.count(input.name()) > 0) continue;
    if (!input.type().has_tensor_type()) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph input '", input.name(), "' is not a tensor"));
    }
    auto* tensor_type = input.mutable_type()->mutable_tensor_type();
    auto given = options.input_shapes.find(input.name());
    if (given != options.input_shapes.end()) {
      used.insert(input.name());
      const int rank = tensor_type->has_shape() ? tensor_type->shape().dim_size() : -1;
      if (rank >= 0 && rank != static_cast<int>(given->second.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat("--input_shape for '", input.name(), "' has ", given->second.size(),
                         " dimensions, the model's input has ", rank));
      }
      auto* shape = tensor_type->mutable_shape();
      for (size_t i = 0; i < given->second.size(); ++i) {
        if (given->second[i] <= 0) {
          return absl::InvalidArgumentError(absl::StrCat("--input_shape for '", input.name(),
                                                         "': dimension ", i, " is not positive"));
        }
        auto* dim =
            i < static_cast<size_t>(shape->dim_size()) ? shape->mutable_dim(i) : shape->add_dim();
        if (dim->has_dim_value() && dim->dim_value() != given->second[i]) {
          changed = true;
          if (i == 0) batch = {dim->dim_value(), given->second[i], {}};
        }
        dim->set_dim_value(given->second[i]);
      }
      continue;
    }
    if (!tensor_type->has_shape()) {
      return absl::InvalidArgumentError(absl::StrCat("graph input '", input.name(),
                                                     "' has no shape: give it with --input_shape ",
                                                     input.name(), "=D0,D1,..."));
    }
    for (int i = 0; i < tensor_type->shape().dim_size(); ++i) {
      const auto& dim = tensor_type->shape().dim(i);
      if (!dim.has_dim_value() || dim.dim_value() <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "graph input '", input.name(), "' dimension ", i, " is dynamic",
            dim.has_dim_param() ? absl::StrCat(" ('", dim.dim_param(), "')") : "",
            ": give the input's shape with --input_shape ", input.name(), "=D0,D1,..."));
      }
    }
  }
  for (const auto& [name, dims] : options.input_shapes) {
    if (used.count(name) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input_shape names '", name, "', which is not an input of the model"));
    }
  }
  if (changed) {
    graph->clear_value_info();
    for (onnx::ValueInfoProto& output : *graph->mutable_output()) {
      auto* type = output.mutable_type()->mutable_tensor_type();
      if (batch.from > 0 && type->shape().dim_size() > 0 &&
          type->shape().dim(0).dim_value() == batch.from) {
        batch.outputs.push_back(output.name());
      }
      type->clear_shape();
    }
  }
  return batch;
}

}  // namespace

[[nodiscard]] absl::StatusOr<std::map<std::string, std::vector<int64_t>>> ParseInputShapes(
    const std::string& text) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (absl::string_view part : absl::StrSplit(text, ';', absl::SkipWhitespace())) {
    std::vector<absl::string_view> name_dims = absl::StrSplit(part, '=');
    if (name_dims.size() != 2 || name_dims[0].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input shape '", part, "' is not NAME=D0,D1,..."));
    }
    std::vector<int64_t>& dims = shapes[std::string(name_dims[0])];
    for (absl::string_view d : absl::StrSplit(name_dims[1], ',')) {
      int64_t value = 0;
      if (!absl::SimpleAtoi(d, &value) || value <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("input shape '", part, "': '", d, "' is not a positive integer"));
      }
      dims.push_back(value);
    }
  }
  return shapes;
}

[[nodiscard]] absl::StatusOr<Graph> ImportOnnxFile(const std::string& path,
                                                   const OnnxImportOptions& options) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path, kMaxOnnxFileBytes);
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(),
                        absl::StrCat("ONNX file: ", bytes.status().message()));
  }
  return ImportOnnxBytes(*bytes, path, options);
}

[[nodiscard]] absl::StatusOr<Graph> ImportOnnxBytes(const std::string& bytes,
                                                    const std::string& source,
                                                    const OnnxImportOptions& options) {
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", source,
                     "' is not an ONNX model (it does not parse as an ONNX ModelProto: another "
                     "format, or a truncated file)"));
  }
  if (!model.has_graph() || model.graph().node_size() == 0 || model.ir_version() <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", source, "' is not an ONNX model (no ir_version or an empty graph)"));
  }
  onnx::GraphProto* proto = model.mutable_graph();
  Graph graph;
  graph.name = proto->name();

  std::set<std::string> initializer_names;
  for (const onnx::TensorProto& t : proto->initializer()) {
    TF_ASSIGN_OR_RETURN(ConstantTensor constant, ConstantOf(t, "initializer"));
    graph.shapes[t.name()] = constant.shape;
    graph.constants[t.name()] = std::move(constant);
    initializer_names.insert(t.name());
  }
  TF_ASSIGN_OR_RETURN(const BatchChange batch, FixInputShapes(proto, initializer_names, options));

  try {
    onnx::ShapeInferenceOptions inference_options(/*check_type_val=*/false, /*strict_mode_val=*/1,
                                                  /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       inference_options);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape inference of '", source, "' failed: ", e.what()));
  }

  for (const onnx::ValueInfoProto& input : proto->input()) {
    if (initializer_names.count(input.name()) > 0) continue;
    graph.inputs.push_back(input.name());
  }
  absl::Status too_large;
  auto note_shape = [&](const onnx::ValueInfoProto& value) {
    TensorShape shape;
    if (!StaticShapeOf(value.type(), &shape)) return;
    if (shape.NumElements() > kMaxTensorElements && too_large.ok()) {
      too_large = absl::InvalidArgumentError(absl::StrCat("tensor '", value.name(), "' of shape ",
                                                          shape.ToString(),
                                                          " is too large (over 2^34 elements)"));
    }
    graph.shapes[value.name()] = shape;
  };
  for (const auto& v : proto->input()) note_shape(v);
  for (const auto& v : proto->value_info()) note_shape(v);
  for (const auto& v : proto->output()) {
    note_shape(v);
    graph.outputs.push_back(v.name());
  }
  TF_RETURN_IF_ERROR(too_large);
  // An output of the exported batch that does not follow the new one: the
  // export baked its batch into the graph (a Reshape to [1, ...]), and the
  // model would run at batch 1 with its images folded into one.
  for (const std::string& output : batch.outputs) {
    auto it = graph.shapes.find(output);
    if (it != graph.shapes.end() && !it->second.dims.empty() && it->second.dims[0] != batch.to) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", source, "' was exported at batch ", batch.from,
          " and fixes it in the graph: at batch ", batch.to, " output '", output, "' would be ",
          it->second.ToString(),
          "; export it with a dynamic batch axis (torch.onnx.export(..., dynamic_axes=...))"));
    }
  }

  std::set<std::string> names;
  for (int i = 0; i < proto->node_size(); ++i) {
    const onnx::NodeProto& n = proto->node(i);
    if (n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx") &&
        n.output_size() == 1) {
      for (const onnx::AttributeProto& a : n.attribute()) {
        if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) {
          onnx::TensorProto t = a.t();
          t.set_name(n.output(0));
          TF_ASSIGN_OR_RETURN(ConstantTensor constant, ConstantOf(t, "Constant node output"));
          graph.shapes[n.output(0)] = constant.shape;
          graph.constants[n.output(0)] = std::move(constant);
        }
      }
      if (graph.constants.count(n.output(0)) > 0) continue;
    }
    GraphNode node;
    node.name = n.name().empty() ? absl::StrCat(n.op_type(), "_", i) : n.name();
    if (!names.insert(node.name).second) node.name = absl::StrCat(node.name, "_", i);
    node.op_type = (n.domain().empty() || n.domain() == "ai.onnx")
                       ? n.op_type()
                       : absl::StrCat(n.domain(), ".", n.op_type());
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    for (const onnx::AttributeProto& a : n.attribute())
      node.attributes[a.name()] = AttributeValue(a);
    graph.nodes.push_back(std::move(node));
  }
  return graph;
}

}  // namespace tunefleet

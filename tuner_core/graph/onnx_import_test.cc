#include "tuner_core/graph/onnx_import.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "tuner_core/graph/task_extraction.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

void AddInput(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
              const std::string& symbolic_first = "") {
  onnx::ValueInfoProto* v = g->add_input();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = t->mutable_shape()->add_dim();
    if (i == 0 && !symbolic_first.empty()) {
      d->set_dim_param(symbolic_first);
    } else {
      d->set_dim_value(dims[i]);
    }
  }
}

void AddWeight(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i) t->add_float_data(0.5f);
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, const std::string& name,
                         std::vector<std::string> inputs, std::vector<std::string> outputs) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  return n;
}

void SetInts(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> values) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

void SetInt(onnx::NodeProto* n, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

// x[1,8,16,16] -> Conv 3x3 pad 1 (16 out) -> Relu -> Flatten -> Gemm (10 out).
onnx::ModelProto SmallCnn(const std::string& symbolic_batch = "") {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("small");
  AddInput(g, "x", {1, 8, 16, 16}, symbolic_batch);
  AddWeight(g, "w", {16, 8, 3, 3});
  AddWeight(g, "fc_w", {10, 4096});
  onnx::NodeProto* conv = AddNode(g, "Conv", "conv1", {"x", "w"}, {"c"});
  SetInts(conv, "pads", {1, 1, 1, 1});
  SetInts(conv, "kernel_shape", {3, 3});
  AddNode(g, "Relu", "relu1", {"c"}, {"r"});
  AddNode(g, "Flatten", "flat", {"r"}, {"f"});
  onnx::NodeProto* gemm = AddNode(g, "Gemm", "fc", {"f", "fc_w"}, {"y"});
  SetInt(gemm, "transB", 1);
  onnx::ValueInfoProto* y = g->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return m;
}

std::string Bytes(const onnx::ModelProto& m) {
  std::string s;
  m.SerializeToString(&s);
  return s;
}

TEST(OnnxImportTest, InfersShapesAndKeepsWeights) {
  absl::StatusOr<Graph> graph = ImportOnnxBytes(Bytes(SmallCnn()), "small.onnx", {});
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(graph->nodes.size(), 4u);
  ASSERT_TRUE(graph->ShapeOf("c").ok());
  EXPECT_EQ(graph->ShapeOf("c")->dims, (std::vector<int64_t>{1, 16, 16, 16}));
  EXPECT_EQ(graph->ShapeOf("f")->dims, (std::vector<int64_t>{1, 4096}));
  EXPECT_EQ(graph->ShapeOf("y")->dims, (std::vector<int64_t>{1, 10}));
  ASSERT_TRUE(graph->IsConstant("w"));
  EXPECT_EQ(graph->constants.at("w").f32.size(), 16u * 8 * 9);
  EXPECT_EQ(graph->nodes[0].attributes["pads"], nlohmann::json({1, 1, 1, 1}));
}

TEST(OnnxImportTest, ExtractsConvAndGemmAndCountsTheRest) {
  absl::StatusOr<Graph> graph = ImportOnnxBytes(Bytes(SmallCnn()), "small.onnx", {});
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<GraphLayers> layers = ExtractLayers(*graph);
  ASSERT_TRUE(layers.ok()) << layers.status();
  ASSERT_EQ(layers->layers.size(), 2u);
  EXPECT_EQ(layers->layers[0].workload, "conv2d_nchw");
  EXPECT_EQ(layers->layers[0].args["K"], 16);
  EXPECT_EQ(layers->layers[0].args["pad_top"], 1);
  EXPECT_EQ(layers->layers[0].name, "conv1");
  EXPECT_EQ(layers->layers[1].workload, "dense");
  EXPECT_EQ(layers->layers[1].args,
            nlohmann::json({{"M", 1}, {"N", 10}, {"K", 4096}, {"layout", "NK"}}));
  ASSERT_EQ(layers->untuned.size(), 2u);
  EXPECT_EQ(layers->untuned[0].op_type, "Relu");
  EXPECT_EQ(layers->untuned[1].op_type, "Flatten");
}

TEST(OnnxImportTest, NotOnnxIsRefused) {
  absl::StatusOr<Graph> graph = ImportOnnxBytes("this is a text file\n", "notes.txt", {});
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(), HasSubstr("'notes.txt' is not an ONNX model"));
  EXPECT_FALSE(ImportOnnxBytes("", "empty.onnx", {}).ok());
}

TEST(OnnxImportTest, TruncatedFileIsRefused) {
  const std::string bytes = Bytes(SmallCnn());
  absl::StatusOr<Graph> graph = ImportOnnxBytes(bytes.substr(0, bytes.size() / 2), "cut.onnx", {});
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(), HasSubstr("truncated"));
}

TEST(OnnxImportTest, DynamicBatchNeedsInputShape) {
  absl::StatusOr<Graph> graph = ImportOnnxBytes(Bytes(SmallCnn("batch")), "dyn.onnx", {});
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(), HasSubstr("'x' dimension 0 is dynamic ('batch')"));
  EXPECT_THAT(graph.status().message(), HasSubstr("--input_shape x="));

  OnnxImportOptions options;
  options.input_shapes["x"] = {1, 8, 16, 16};
  graph = ImportOnnxBytes(Bytes(SmallCnn("batch")), "dyn.onnx", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->ShapeOf("y")->dims, (std::vector<int64_t>{1, 10}));
}

// A model exported at batch 1 imported at batch 2: every shape follows;
// a given shape of another rank or naming no input is refused.
TEST(OnnxImportTest, InputShapeMayChangeTheExportedBatch) {
  OnnxImportOptions options;
  options.input_shapes["x"] = {2, 8, 16, 16};
  absl::StatusOr<Graph> graph = ImportOnnxBytes(Bytes(SmallCnn()), "small.onnx", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (const std::string& output : graph->outputs) {
    EXPECT_EQ(graph->shapes.at(output).dims.at(0), 2) << output;
  }
  options.input_shapes["x"] = {2, 8, 16};
  EXPECT_THAT(ImportOnnxBytes(Bytes(SmallCnn()), "small.onnx", options).status().message(),
              HasSubstr("has 3 dimensions, the model's input has 4"));
  options.input_shapes = {{"image", {1, 8, 16, 16}}};
  graph = ImportOnnxBytes(Bytes(SmallCnn()), "small.onnx", options);
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(), HasSubstr("'image', which is not an input"));
}

// x[1, 4] -> Reshape to [1, -1] (the batch baked in, as an export at batch
// 1 writes it) -> Relu: at batch 2 the output would be [1, 8], refused.
TEST(OnnxImportTest, BatchBakedIntoTheGraphIsRefused) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddInput(g, "x", {1, 4});
  onnx::TensorProto* shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(1);
  shape->add_int64_data(-1);
  AddNode(g, "Reshape", "flat", {"x", "shape"}, {"f"});
  AddNode(g, "Relu", "relu", {"f"}, {"y"});
  onnx::ValueInfoProto* y = g->add_output();
  y->set_name("y");
  auto* type = y->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  type->mutable_shape()->add_dim()->set_dim_value(1);
  type->mutable_shape()->add_dim()->set_dim_value(4);
  OnnxImportOptions options;
  options.input_shapes["x"] = {2, 4};
  absl::StatusOr<Graph> graph = ImportOnnxBytes(Bytes(m), "baked.onnx", options);
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(),
              HasSubstr("exported at batch 1 and fixes it in the graph: at batch 2 output 'y' "
                        "would be [1, 8]"));
}

// A crafted input shape whose product overflows int64 is refused, not
// wrapped into a small allocation.
TEST(OnnxImportTest, HugeShapeIsRefused) {
  OnnxImportOptions options;
  options.input_shapes["x"] = {int64_t{1} << 40, 8, int64_t{1} << 40, 16};
  absl::StatusOr<Graph> graph = ImportOnnxBytes(Bytes(SmallCnn()), "small.onnx", options);
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(), HasSubstr("is too large"));
  EXPECT_GT((TensorShape{kOnnxFloat, {int64_t{1} << 40, int64_t{1} << 40}}.NumElements()),
            kMaxTensorElements);
}

TEST(OnnxImportTest, UnknownShapeOfATunedOperatorNamesTheNode) {
  onnx::ModelProto m = SmallCnn();
  // An operator of a domain ONNX does not know: its output shape stays unknown.
  onnx::NodeProto* custom = m.mutable_graph()->mutable_node(0);
  custom->set_op_type("MysteryOp");
  custom->set_domain("com.example");
  custom->clear_attribute();
  m.mutable_graph()->mutable_node(0)->set_output(0, "c");
  onnx::OperatorSetIdProto* opset = m.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  absl::StatusOr<Graph> graph = ImportOnnxBytes(Bytes(m), "custom.onnx", {});
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<GraphLayers> layers = ExtractLayers(*graph);
  ASSERT_FALSE(layers.ok());
  EXPECT_THAT(layers.status().message(), HasSubstr("node 'fc'"));
}

TEST(OnnxImportTest, ExternalDataIsRefusedByName) {
  onnx::ModelProto m = SmallCnn();
  onnx::TensorProto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  absl::StatusOr<Graph> graph = ImportOnnxBytes(Bytes(m), "ext.onnx", {});
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(),
              HasSubstr("initializer 'w' keeps its data in an external file"));
}

TEST(OnnxImportTest, ParsesInputShapes) {
  auto shapes = ParseInputShapes("input=1,3,224,224;mask=1,128");
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ(shapes->at("input"), (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(shapes->at("mask"), (std::vector<int64_t>{1, 128}));
  EXPECT_FALSE(ParseInputShapes("input").ok());
  EXPECT_FALSE(ParseInputShapes("input=1,x").ok());
  EXPECT_FALSE(ParseInputShapes("input=1,0").ok());
}

}  // namespace
}  // namespace tunefleet

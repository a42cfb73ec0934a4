// The real thing: ResNet-18, MobileNet-v2 and a transformer encoder layer as
// PyTorch's exporter writes them (//tuner_core/graph:exported_models).
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/graph/model_source.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

std::string Exported(const std::string& name) { return "tuner_core/graph/testdata/" + name; }

// The ONNX export of a torchvision model gives exactly the tasks of the
// built-in layer table, in the same order and with the same layer counts.
void ExpectSameTasksAsBuiltIn(const std::string& onnx, const std::string& builtin) {
  absl::StatusOr<LoadedModel> from_onnx = LoadModel(Exported(onnx), {});
  ASSERT_TRUE(from_onnx.ok()) << from_onnx.status();
  absl::StatusOr<LoadedModel> from_table = LoadModel(builtin, {});
  ASSERT_TRUE(from_table.ok()) << from_table.status();
  ASSERT_EQ(from_onnx->tasks.size(), from_table->tasks.size());
  for (size_t i = 0; i < from_onnx->tasks.size(); ++i) {
    EXPECT_EQ(from_onnx->tasks[i].workload, from_table->tasks[i].workload) << "task " << i;
    EXPECT_EQ(from_onnx->tasks[i].args, from_table->tasks[i].args) << "task " << i;
    EXPECT_EQ(from_onnx->tasks[i].num_layers, from_table->tasks[i].num_layers) << "task " << i;
    EXPECT_NEAR(from_onnx->tasks[i].flops_share, from_table->tasks[i].flops_share, 1e-12);
  }
}

TEST(ExportedModelsTest, ResNet18MatchesTheBuiltInTable) {
  ExpectSameTasksAsBuiltIn("resnet18.onnx", "resnet-18");
}

TEST(ExportedModelsTest, MobileNetV2MatchesTheBuiltInTable) {
  ExpectSameTasksAsBuiltIn("mobilenet_v2.onnx", "mobilenet-v2");
}

TEST(ExportedModelsTest, ResNet18ListsWhatIsNotTuned) {
  absl::StatusOr<LoadedModel> model = LoadModel(Exported("resnet18.onnx"), {});
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->layers.size(), 21u);  // 20 convs + fc
  std::map<std::string, int> untuned;
  for (const UntunedOperators& op : model->untuned) untuned[op.op_type] += op.count;
  EXPECT_EQ(untuned["Relu"], 17);
  EXPECT_EQ(untuned["Add"], 8);
  EXPECT_EQ(untuned["MaxPool"], 1);
  EXPECT_EQ(untuned["GlobalAveragePool"], 1);
  EXPECT_EQ(untuned.count("Conv"), 0u);
}

TEST(ExportedModelsTest, EncoderLayerGivesDenseAndBatchMatmulTasks) {
  absl::StatusOr<LoadedModel> model = LoadModel(Exported("encoder.onnx"), {});
  ASSERT_TRUE(model.ok()) << model.status();
  std::map<std::string, int> layers_by_workload;
  for (const ModelLayer& layer : model->layers) ++layers_by_workload[layer.workload];
  // in-projection, out-projection, two feed-forward layers; Q.K^T and P.V.
  EXPECT_EQ(layers_by_workload["dense"], 4);
  EXPECT_EQ(layers_by_workload["batch_matmul"], 2);
  bool saw_ff1 = false, saw_scores = false;
  for (const ModelTask& task : model->tasks) {
    if (task.workload == "dense" && task.args["N"] == 3072 && task.args["K"] == 768 &&
        task.args["M"] == 128) {
      saw_ff1 = true;
    }
    if (task.workload == "batch_matmul" && task.args["B"] == 12 && task.args["M"] == 128 &&
        task.args["K"] == 64 && task.args["N"] == 128) {
      saw_scores = true;
    }
  }
  EXPECT_TRUE(saw_ff1);
  EXPECT_TRUE(saw_scores);
}

TEST(ExportedModelsTest, DynamicBatchNeedsInputShape) {
  const std::string path = "tuner_core/graph/testdata/dynamic/resnet18.onnx";
  absl::StatusOr<LoadedModel> model = LoadModel(path, {});
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("'input' dimension 0 is dynamic ('batch')"));
  OnnxImportOptions options;
  options.input_shapes["input"] = {1, 3, 224, 224};
  model = LoadModel(path, options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->tasks.size(), 12u);
}

TEST(ExportedModelsTest, TruncatedExportIsRefused) {
  std::ifstream in(Exported("resnet18.onnx"), std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const std::string cut = bytes.str().substr(0, bytes.str().size() / 3);
  absl::StatusOr<Graph> graph = ImportOnnxBytes(cut, "cut.onnx", {});
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.status().message(), HasSubstr("not an ONNX model"));
}

TEST(ExportedModelsTest, MissingFileIsNamed) {
  absl::StatusOr<LoadedModel> model = LoadModel("no/such/model.onnx", {});
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("no/such/model.onnx"));
}

}  // namespace
}  // namespace tunefleet

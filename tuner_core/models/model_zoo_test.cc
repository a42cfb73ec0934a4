#include "tuner_core/models/model_zoo.h"

#include <map>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {
namespace {

const std::set<std::string> kConvKeys = {
    "N",        "C",       "H",        "W",          "K",         "R",     "S",     "stride_h",
    "stride_w", "pad_top", "pad_left", "pad_bottom", "pad_right", "dil_h", "dil_w", "layout"};

std::set<std::string> Keys(const nlohmann::json& args) {
  std::set<std::string> keys;
  for (auto it = args.begin(); it != args.end(); ++it) keys.insert(it.key());
  return keys;
}

std::vector<ModelLayer> Layers(const std::string& model) {
  auto layers = ModelLayers(model);
  EXPECT_TRUE(layers.ok()) << layers.status();
  return layers.ok() ? *layers : std::vector<ModelLayer>{};
}

std::vector<ModelTask> Tasks(const std::string& model) {
  auto tasks = ModelTasks(model);
  EXPECT_TRUE(tasks.ok()) << tasks.status();
  return tasks.ok() ? *tasks : std::vector<ModelTask>{};
}

std::map<std::string, int> CountByWorkload(const std::vector<ModelTask>& tasks) {
  std::map<std::string, int> counts;
  for (const ModelTask& task : tasks) ++counts[task.workload];
  return counts;
}

double TotalFlops(const std::vector<ModelTask>& tasks) {
  double total = 0;
  for (const ModelTask& task : tasks) total += task.num_layers * task.flops;
  return total;
}

// Square conv (H == W, R == S, symmetric pad, no dilation) at batch 1.
nlohmann::json Conv(int c, int h, int k, int r, int stride, int pad) {
  return {{"N", 1},
          {"C", c},
          {"H", h},
          {"W", h},
          {"K", k},
          {"R", r},
          {"S", r},
          {"stride_h", stride},
          {"stride_w", stride},
          {"pad_top", pad},
          {"pad_left", pad},
          {"pad_bottom", pad},
          {"pad_right", pad},
          {"dil_h", 1},
          {"dil_w", 1},
          {"layout", "NCHWc"}};
}

nlohmann::json Dense(int in, int out) {
  return {{"M", 1}, {"N", out}, {"K", in}, {"layout", "NK"}};
}

// Layer count of the task with exactly these args; -1 when there is none.
int LayersOf(const std::vector<ModelTask>& tasks, const std::string& workload,
             const nlohmann::json& args) {
  for (const ModelTask& task : tasks) {
    if (task.workload == workload && task.args == args) return task.num_layers;
  }
  return -1;
}

TEST(ModelZooTest, NamesAreSorted) {
  EXPECT_EQ(ModelNames(),
            (std::vector<std::string>{"mobilenet-v2", "resnet-18", "resnet-50", "vgg-16"}));
}

TEST(ModelZooTest, UnknownModelIsAnErrorNamingItAndTheKnownOnes) {
  for (auto status : {ModelLayers("resnet-152").status(), ModelTasks("resnet-152").status()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
    EXPECT_TRUE(absl::StrContains(status.message(), "resnet-152")) << status;
    for (const std::string& known : ModelNames()) {
      EXPECT_TRUE(absl::StrContains(status.message(), known)) << status;
    }
  }
}

TEST(ModelZooTest, LayersHaveCanonicalArgsAndUniqueNames) {
  for (const std::string& model : ModelNames()) {
    std::set<std::string> names;
    for (const ModelLayer& layer : Layers(model)) {
      SCOPED_TRACE(absl::StrCat(model, " ", layer.name, " ", layer.args.dump()));
      EXPECT_TRUE(names.insert(layer.name).second) << "duplicate layer name";
      if (layer.workload == "conv2d_nchw") {
        EXPECT_EQ(Keys(layer.args), kConvKeys);
        EXPECT_EQ(layer.args["layout"], "NCHWc");
      } else if (layer.workload == "depthwise_conv2d_nchw") {
        std::set<std::string> keys = kConvKeys;
        keys.erase("K");
        EXPECT_EQ(Keys(layer.args), keys);
        EXPECT_EQ(layer.args["layout"], "NCHWc");
      } else {
        ASSERT_EQ(layer.workload, "dense");
        EXPECT_EQ(Keys(layer.args), (std::set<std::string>{"M", "N", "K", "layout"}));
        EXPECT_EQ(layer.args["layout"], "NK");
      }
      // Batch 1 (dense's batch is M; its N is out features), square inputs.
      if (layer.workload == "dense") {
        EXPECT_EQ(layer.args["M"], 1);
      } else {
        EXPECT_EQ(layer.args["N"], 1);
        EXPECT_EQ(layer.args["H"], layer.args["W"]);
      }
      EXPECT_GT(ModelLayerFlops(layer.workload, layer.args), 0);
    }
  }
}

TEST(ModelZooTest, TasksCoverEveryLayerAndSharesSumToOne) {
  for (const std::string& model : ModelNames()) {
    SCOPED_TRACE(model);
    std::vector<ModelLayer> layers = Layers(model);
    std::vector<ModelTask> tasks = Tasks(model);
    double layer_flops = 0;
    for (const ModelLayer& layer : layers)
      layer_flops += ModelLayerFlops(layer.workload, layer.args);
    int num_layers = 0;
    double shares = 0;
    std::set<std::string> distinct;
    for (const ModelTask& task : tasks) {
      num_layers += task.num_layers;
      shares += task.flops_share;
      EXPECT_GE(task.num_layers, 1);
      EXPECT_DOUBLE_EQ(task.flops, ModelLayerFlops(task.workload, task.args));
      EXPECT_NEAR(task.flops_share, task.num_layers * task.flops / layer_flops, 1e-12);
      EXPECT_TRUE(distinct.insert(task.workload + task.args.dump()).second);
    }
    EXPECT_EQ(num_layers, static_cast<int>(layers.size()));
    EXPECT_NEAR(shares, 1.0, 1e-9);
    EXPECT_NEAR(TotalFlops(tasks), layer_flops, 1e-6 * layer_flops);
    // Order of first appearance: the first layer is the first task.
    ASSERT_FALSE(tasks.empty());
    EXPECT_EQ(tasks.front().args, layers.front().args);
  }
}

TEST(ModelZooTest, TaskAndLayerCountsPerModel) {
  struct Expected {
    const char* model;
    int layers, conv, depthwise, dense;
  } cases[] = {
      // 20 convs (stem, 16 in blocks, 3 downsample) + fc.
      {"resnet-18", 21, 11, 0, 1},
      // 53 convs (stem, 48 in blocks, 4 downsample) + fc; in layer1 the
      // 64->256 1x1 downsample is the same task as the blocks' conv3.
      {"resnet-50", 54, 23, 0, 1},
      // stem + 17 blocks (16 expand, 17 depthwise, 17 project) + final 1x1 + fc.
      {"mobilenet-v2", 53, 20, 10, 1},
      // 13 convs at 9 distinct (C, K, H) + 3 fc.
      {"vgg-16", 16, 9, 0, 3},
  };
  for (const Expected& e : cases) {
    SCOPED_TRACE(e.model);
    EXPECT_EQ(static_cast<int>(Layers(e.model).size()), e.layers);
    std::vector<ModelTask> tasks = Tasks(e.model);
    EXPECT_EQ(static_cast<int>(tasks.size()), e.conv + e.depthwise + e.dense);
    std::map<std::string, int> counts = CountByWorkload(tasks);
    EXPECT_EQ(counts["conv2d_nchw"], e.conv);
    EXPECT_EQ(counts["depthwise_conv2d_nchw"], e.depthwise);
    EXPECT_EQ(counts["dense"], e.dense);
  }
}

TEST(ModelZooTest, ResNet18TasksAndLayerCounts) {
  std::vector<ModelTask> tasks = Tasks("resnet-18");
  ASSERT_EQ(tasks.size(), 12u);
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(3, 224, 64, 7, 2, 3)), 1);
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(64, 56, 64, 3, 1, 1)), 4);
  int c = 64, h = 56;
  for (int k : {128, 256, 512}) {
    SCOPED_TRACE(k);
    EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(c, h, k, 3, 2, 1)), 1);  // first conv, /2
    EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(k, h / 2, k, 3, 1, 1)), 3);
    EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(c, h, k, 1, 2, 0)), 1);  // downsample
    c = k;
    h /= 2;
  }
  EXPECT_EQ(LayersOf(tasks, "dense", Dense(512, 1000)), 1);
  // First appearance order: stem, then layer1's 3x3.
  EXPECT_EQ(tasks[0].args, Conv(3, 224, 64, 7, 2, 3));
  EXPECT_EQ(tasks[1].args, Conv(64, 56, 64, 3, 1, 1));
  EXPECT_EQ(tasks.back().workload, "dense");
  EXPECT_DOUBLE_EQ(tasks[1].flops, 2.0 * 64 * 56 * 56 * 64 * 9);
}

TEST(ModelZooTest, ResNet50SharesTheBottleneckExpansionWithTheFirstDownsample) {
  std::vector<ModelTask> tasks = Tasks("resnet-50");
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(64, 56, 256, 1, 1, 0)), 4);
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(64, 56, 64, 3, 1, 1)), 3);
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(128, 56, 128, 3, 2, 1)), 1);  // stride in the 3x3
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(256, 14, 256, 3, 1, 1)), 5);
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(1024, 14, 2048, 1, 2, 0)), 1);
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(512, 7, 2048, 1, 1, 0)), 3);
  EXPECT_EQ(LayersOf(tasks, "dense", Dense(2048, 1000)), 1);
}

TEST(ModelZooTest, MobileNetV2DepthwiseLayers) {
  std::vector<ModelLayer> layers = Layers("mobilenet-v2");
  int depthwise = 0;
  for (const ModelLayer& layer : layers) {
    if (layer.workload != "depthwise_conv2d_nchw") continue;
    ++depthwise;
    EXPECT_EQ(layer.args["R"], 3);
    EXPECT_EQ(layer.args["pad_top"], 1);
    EXPECT_EQ(layer.args["pad_right"], 1);
  }
  EXPECT_EQ(depthwise, 17);
  std::vector<ModelTask> tasks = Tasks("mobilenet-v2");
  EXPECT_EQ(CountByWorkload(tasks)["depthwise_conv2d_nchw"], 10);
  // 384 channels at 14x14, stride 1: three 64-blocks and the first 96-block.
  nlohmann::json dw384 = Conv(384, 14, 0, 3, 1, 1);
  dw384.erase("K");
  EXPECT_EQ(LayersOf(tasks, "depthwise_conv2d_nchw", dw384), 4);
  EXPECT_DOUBLE_EQ(ModelLayerFlops("depthwise_conv2d_nchw", dw384), 2.0 * 384 * 14 * 14 * 9);
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(3, 224, 32, 3, 2, 1)), 1);
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(320, 7, 1280, 1, 1, 0)), 1);
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(64, 14, 384, 1, 1, 0)), 4);
  EXPECT_EQ(LayersOf(tasks, "dense", Dense(1280, 1000)), 1);
}

TEST(ModelZooTest, Vgg16Tasks) {
  std::vector<ModelTask> tasks = Tasks("vgg-16");
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(3, 224, 64, 3, 1, 1)), 1);
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(256, 56, 256, 3, 1, 1)), 2);
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(512, 28, 512, 3, 1, 1)), 2);
  EXPECT_EQ(LayersOf(tasks, "conv2d_nchw", Conv(512, 14, 512, 3, 1, 1)), 3);
  EXPECT_EQ(LayersOf(tasks, "dense", Dense(25088, 4096)), 1);
  EXPECT_EQ(LayersOf(tasks, "dense", Dense(4096, 4096)), 1);
  EXPECT_EQ(LayersOf(tasks, "dense", Dense(4096, 1000)), 1);
}

TEST(ModelZooTest, TotalFlopsMatchThePublishedMacCounts) {
  struct Expected {
    const char* model;
    double flops, tolerance;
  } cases[] = {
      {"resnet-18", 3.6e9, 0.02},     // 1.8 GMACs
      {"resnet-50", 8.2e9, 0.03},     // 4.1 GMACs
      {"mobilenet-v2", 0.6e9, 0.05},  // 300 MMACs
      {"vgg-16", 31e9, 0.03},         // 15.5 GMACs
  };
  for (const Expected& e : cases) {
    double total = TotalFlops(Tasks(e.model));
    EXPECT_NEAR(total, e.flops, e.tolerance * e.flops) << e.model;
  }
}

// The model zoo's FLOPs and args against the registered workloads. Skipped
// for a workload that is not registered (yet).
void CheckAgainstWorkloads(const std::string& workload) {
  int checked = 0;
  for (const std::string& model : ModelNames()) {
    for (const ModelTask& task : Tasks(model)) {
      if (task.workload != workload) continue;
      SCOPED_TRACE(absl::StrCat(model, " ", workload, " ", task.args.dump()));
      auto made = MakeWorkload(task.workload, task.args);
      if (!made.ok() && absl::StrContains(made.status().message(), "unknown workload")) {
        GTEST_SKIP() << "workload \"" << workload << "\" is not registered: " << made.status();
      }
      ASSERT_TRUE(made.ok()) << made.status();
      EXPECT_DOUBLE_EQ((*made)->flops(), task.flops);
      EXPECT_EQ((*made)->args(), task.args) << "model zoo args are not canonical";
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(ModelZooTest, DenseFlopsMatchTheWorkload) { CheckAgainstWorkloads("dense"); }
TEST(ModelZooTest, ConvFlopsMatchTheWorkload) { CheckAgainstWorkloads("conv2d_nchw"); }
TEST(ModelZooTest, DepthwiseFlopsMatchTheWorkload) {
  CheckAgainstWorkloads("depthwise_conv2d_nchw");
}

}  // namespace
}  // namespace tunefleet

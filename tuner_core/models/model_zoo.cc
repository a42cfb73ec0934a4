#include "tuner_core/models/model_zoo.h"

#include <array>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tuner_core/workloads/conv_args.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {
namespace {

constexpr int kBatch = 1;
constexpr int kImageSize = 224;
constexpr int kNumClasses = 1000;

// Output size of a convolution/pooling window along one axis.
int64_t OutSize(int64_t in, int64_t pad_before, int64_t pad_after, int64_t kernel, int64_t stride,
                int64_t dilation) {
  return (in + pad_before + pad_after - dilation * (kernel - 1) - 1) / stride + 1;
}

// Accumulates a model's layers. Every feature map here is square (H == W)
// and every window is square with symmetric padding and no dilation.
class Net {
 public:
  // A C -> K conv, R x R, on an H x H input; returns the output size.
  int Conv(const std::string& name, int c, int h, int k, int r, int stride, int pad) {
    ConvArgs a = Window(c, h, r, stride, pad);
    a.k = k;
    layers_.push_back({"conv2d_nchw", CanonicalConvArgs(a, ConvOutChannels::kFromK), name});
    return static_cast<int>(OutSize(h, pad, pad, r, stride, 1));
  }
  // A depthwise conv (multiplier 1) on C channels; returns the output size.
  int Depthwise(const std::string& name, int c, int h, int r, int stride, int pad) {
    layers_.push_back({"depthwise_conv2d_nchw",
                       CanonicalConvArgs(Window(c, h, r, stride, pad), ConvOutChannels::kSameAsC),
                       name});
    return static_cast<int>(OutSize(h, pad, pad, r, stride, 1));
  }
  // A linear layer in_features -> out_features at the model's batch.
  void Dense(const std::string& name, int in_features, int out_features) {
    layers_.push_back({"dense",
                       {{"M", kBatch}, {"N", out_features}, {"K", in_features}, {"layout", "NK"}},
                       name});
  }
  std::vector<ModelLayer> Take() { return std::move(layers_); }

 private:
  // A square window on a square input at the model's batch, run blocked
  // end to end (layout NCHWc). Only what CanonicalConvArgs reads is set.
  static ConvArgs Window(int c, int h, int r, int stride, int pad) {
    ConvArgs a;
    a.n = kBatch;
    a.c = c;
    a.h = a.w = h;
    a.r = a.s = r;
    a.stride_h = a.stride_w = stride;
    a.pad_top = a.pad_left = a.pad_bottom = a.pad_right = pad;
    a.dil_h = a.dil_w = 1;
    a.layout_nchwc = true;
    return a;
  }

  std::vector<ModelLayer> layers_;
};

// torchvision ResNet: BasicBlock (two 3x3) or Bottleneck (1x1, 3x3 with the
// stride, 1x1 expanding 4x); a 1x1 projection shortcut where shape changes.
std::vector<ModelLayer> ResNet(bool bottleneck, const std::array<int, 4>& blocks) {
  Net net;
  int h = net.Conv("conv1", 3, kImageSize, 64, 7, 2, 3);  // 112
  h = static_cast<int>(OutSize(h, 1, 1, 3, 2, 1));        // maxpool 3x3/2 pad 1: 56
  int c = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int width = 64 << stage;
    const int out = bottleneck ? 4 * width : width;
    for (int b = 0; b < blocks[stage]; ++b) {
      const int stride = (stage > 0 && b == 0) ? 2 : 1;
      const std::string prefix = absl::StrCat("layer", stage + 1, ".", b, ".");
      int oh;
      if (bottleneck) {
        net.Conv(prefix + "conv1", c, h, width, 1, 1, 0);
        oh = net.Conv(prefix + "conv2", width, h, width, 3, stride, 1);
        net.Conv(prefix + "conv3", width, oh, out, 1, 1, 0);
      } else {
        oh = net.Conv(prefix + "conv1", c, h, width, 3, stride, 1);
        net.Conv(prefix + "conv2", width, oh, width, 3, 1, 1);
      }
      if (stride != 1 || c != out) net.Conv(prefix + "downsample.0", c, h, out, 1, stride, 0);
      c = out;
      h = oh;
    }
  }
  net.Dense("fc", c, kNumClasses);  // after global average pooling
  return net.Take();
}

// torchvision MobileNetV2, width 1.0.
std::vector<ModelLayer> MobileNetV2() {
  struct Stage {
    int t, c, n, s;  // expansion, out channels, repeats, first stride
  };
  static constexpr Stage kStages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                      {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  Net net;
  int h = net.Conv("features.0.0", 3, kImageSize, 32, 3, 2, 1);  // 112
  int c = 32;
  int index = 1;
  for (const Stage& stage : kStages) {
    for (int i = 0; i < stage.n; ++i, ++index) {
      const int stride = i == 0 ? stage.s : 1;
      const int hidden = c * stage.t;
      const std::string prefix = absl::StrCat("features.", index, ".conv.");
      int j = 0;
      if (stage.t != 1) net.Conv(absl::StrCat(prefix, j++, ".0"), c, h, hidden, 1, 1, 0);
      const int oh = net.Depthwise(absl::StrCat(prefix, j++, ".0"), hidden, h, 3, stride, 1);
      net.Conv(absl::StrCat(prefix, j), hidden, oh, stage.c, 1, 1, 0);
      c = stage.c;
      h = oh;
    }
  }
  net.Conv(absl::StrCat("features.", index, ".0"), c, h, 1280, 1, 1, 0);
  net.Dense("classifier.1", 1280, kNumClasses);  // after global average pooling
  return net.Take();
}

// torchvision VGG-16 (configuration "D", no batch norm).
std::vector<ModelLayer> Vgg16() {
  static constexpr int kWidths[] = {64, 128, 256, 512, 512};
  static constexpr int kConvs[] = {2, 2, 3, 3, 3};
  Net net;
  int h = kImageSize;
  int c = 3;
  int index = 0;  // torchvision's index into `features` (conv, relu, ..., pool)
  for (int stage = 0; stage < 5; ++stage) {
    for (int i = 0; i < kConvs[stage]; ++i) {
      h = net.Conv(absl::StrCat("features.", index), c, h, kWidths[stage], 3, 1, 1);
      c = kWidths[stage];
      index += 2;  // conv + relu
    }
    h = static_cast<int>(OutSize(h, 0, 0, 2, 2, 1));  // maxpool 2x2/2
    index += 1;
  }
  // h == 7 here, so torchvision's adaptive average pool to 7x7 is the identity.
  net.Dense("classifier.0", c * h * h, 4096);
  net.Dense("classifier.3", 4096, 4096);
  net.Dense("classifier.6", 4096, kNumClasses);
  return net.Take();
}

struct ModelEntry {
  const char* name;
  std::vector<ModelLayer> (*build)();
};

const ModelEntry kModels[] = {
    {"mobilenet-v2", &MobileNetV2},
    {"resnet-18", [] { return ResNet(/*bottleneck=*/false, {2, 2, 2, 2}); }},
    {"resnet-50", [] { return ResNet(/*bottleneck=*/true, {3, 4, 6, 3}); }},
    {"vgg-16", &Vgg16},
};

}  // namespace

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const ModelEntry& entry : kModels) names.push_back(entry.name);
  return names;
}

[[nodiscard]] absl::StatusOr<std::vector<ModelLayer>> ModelLayers(const std::string& model) {
  for (const ModelEntry& entry : kModels) {
    if (model == entry.name) return entry.build();
  }
  return absl::NotFoundError(absl::StrCat("unknown model \"", model,
                                          "\" (known: ", absl::StrJoin(ModelNames(), ", "), ")"));
}

double ModelLayerFlops(const std::string& workload, const nlohmann::json& args) {
  // The workload's own count (one formula per workload, in tuner_core/workloads).
  absl::StatusOr<std::unique_ptr<Workload>> made = MakeWorkload(workload, args);
  return made.ok() ? (*made)->flops() : 0;
}

std::vector<ModelTask> GroupLayers(const std::vector<ModelLayer>& layers) {
  std::vector<ModelTask> tasks;
  absl::flat_hash_map<std::string, size_t> index;  // workload + canonical args dump -> task
  double total = 0;
  for (const ModelLayer& layer : layers) {
    // nlohmann::json objects keep their keys sorted, so dump() is canonical.
    auto [it, inserted] =
        index.try_emplace(absl::StrCat(layer.workload, " ", layer.args.dump()), tasks.size());
    if (inserted) {
      tasks.push_back(
          {layer.workload, layer.args, 0, ModelLayerFlops(layer.workload, layer.args), 0});
    }
    ModelTask& task = tasks[it->second];
    ++task.num_layers;
    task.layer_names.push_back(layer.name);
    total += task.flops;
  }
  for (ModelTask& task : tasks)
    task.flops_share = total > 0 ? task.num_layers * task.flops / total : 0;
  return tasks;
}

[[nodiscard]] absl::StatusOr<std::vector<ModelTask>> ModelTasks(const std::string& model) {
  auto layers = ModelLayers(model);
  if (!layers.ok()) return layers.status();
  return GroupLayers(*layers);
}

}  // namespace tunefleet

// The tunable layers of a few standard CNNs, as workloads (name + canonical
// args) that MakeWorkload() accepts, so a whole model can be tuned task by task.
//
// Models (batch 1, 224x224 RGB input, NCHW):
//   "mobilenet-v2"  width 1.0 (stem 3x3/2 to 32, the inverted-residual table,
//                   1x1 to 1280, classifier 1280->1000)
//   "resnet-18"     torchvision BasicBlock ResNet
//   "resnet-50"     torchvision Bottleneck ResNet (v1.5: stride in the 3x3)
//   "vgg-16"        13 3x3 convs + fc 25088->4096->4096->1000
//
// Only convolutions and fully-connected layers are listed (pooling, batch
// norm, activations and residual adds are not tuned):
//   "conv2d_nchw"            {N, C, H, W, K, R, S, stride_h, stride_w, pad_top,
//                             pad_left, pad_bottom, pad_right, dil_h, dil_w,
//                             layout: "NCHWc"}       (1x1 pointwise convs too)
//   "depthwise_conv2d_nchw"  the same keys minus K (channel multiplier 1)
//   "dense"                  {M, N, K, layout: "NK"} (M = batch, N = out
//                             features, K = in features)
//   "batch_matmul"           {B, M, N, K, layout} (ONNX graphs only)
// Every key is present in every args object.
//
// FLOPs count a multiply-add as 2: conv 2*N*K*OH*OW*C*R*S, depthwise
// 2*N*C*OH*OW*R*S, dense 2*M*N*K, batch_matmul 2*B*M*N*K (the same numbers Workload::flops()
// gives).
#ifndef TUNEFLEET_TUNER_CORE_MODELS_MODEL_ZOO_H_
#define TUNEFLEET_TUNER_CORE_MODELS_MODEL_ZOO_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tunefleet {

// One conv / depthwise conv / dense layer of a model.
struct ModelLayer {
  std::string workload;  // "conv2d_nchw", "depthwise_conv2d_nchw" or "dense"
  nlohmann::json args;   // canonical args (see above)
  std::string name;      // torchvision-style module name, e.g. "layer2.0.conv1"
};

// One distinct (workload, args) of a model: what gets tuned once and then
// serves every layer with those shapes.
struct ModelTask {
  std::string workload;
  nlohmann::json args;
  int num_layers = 0;                    // layers of the model with exactly these args
  double flops = 0;                      // of ONE layer
  double flops_share = 0;                // num_layers * flops / FLOPs of all listed layers
  std::vector<std::string> layer_names;  // the layers it serves, in model order
};

// "mobilenet-v2", "resnet-18", "resnet-50", "vgg-16" (sorted).
std::vector<std::string> ModelNames();

// The model's layers in forward order. NotFound naming `model` and listing the
// known models for an unknown name.
[[nodiscard]] absl::StatusOr<std::vector<ModelLayer>> ModelLayers(const std::string& model);

// The model's distinct (workload, args) in order of first appearance, with
// layer counts and FLOP shares (the shares sum to 1). Errors as ModelLayers.
[[nodiscard]] absl::StatusOr<std::vector<ModelTask>> ModelTasks(const std::string& model);

// The distinct (workload, args) of `layers` in order of first appearance,
// with layer counts, names and FLOP shares (the shares sum to 1). The one
// grouping of layers into tasks: the built-in models and ONNX graphs
// (tuner_core/graph) both use it.
std::vector<ModelTask> GroupLayers(const std::vector<ModelLayer>& layers);

// FLOPs of one layer from its workload and canonical args: the workload's
// own flops() (0 for args no workload accepts).
double ModelLayerFlops(const std::string& workload, const nlohmann::json& args);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_MODELS_MODEL_ZOO_H_

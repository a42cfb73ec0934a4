// Issue 17's acceptance test: ResNet-18, MobileNet-v2, one transformer
// encoder layer and a small net of concatenations as PyTorch exports them
// (//tuner_core/graph:exported_models), compiled for this machine and run through the C API,
// against PyTorch's outputs for the same seeded model and input (//compiler:torch_references); and
// the errors a user meets (records for another target, a corrupt records line, an unsupported
// operator, a wrong shape, a null buffer).
#include <cmath>
#include <fstream>
#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "compiler/kernel_choice.h"
#include "compiler/lower_model.h"
#include "compiler/model_compiler.h"
#include "compiler/npy.h"
#include "compiler/runtime/model_runtime.h"
#include "compiler/runtime/tunefleet_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/graph/model_source.h"
#include "tuner_core/records/record.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

const char kOnnxDir[] = "tuner_core/graph/testdata/";
const char kRefDir[] = "compiler/testdata/";

std::string OutDir(const std::string& name) { return ::testing::TempDir() + "/" + name; }

// max |a - b| / max |b|: the error relative to the output's scale.
double MaxRelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return diff / scale;
}

// Runs the compiled model in `dir` on the reference input of `model`
// through the C API and returns the error against PyTorch's output.
double ErrorAgainstPyTorch(const std::string& dir, const std::string& model) {
  absl::StatusOr<FloatTensor> x = ReadTensorFile(std::string(kRefDir) + model + "_input.npy");
  absl::StatusOr<FloatTensor> expected =
      ReadTensorFile(std::string(kRefDir) + model + "_expected.npy");
  EXPECT_TRUE(x.ok() && expected.ok());
  TfModel* m = nullptr;
  EXPECT_EQ(tf_model_open(dir.c_str(), &m), 0) << tf_model_last_error();
  if (m == nullptr) return 1e9;
  EXPECT_EQ(tf_model_num_inputs(m), 1);
  EXPECT_EQ(tf_model_input_elements(m, 0), static_cast<int64_t>(x->data.size()));
  EXPECT_EQ(tf_model_set_threads(m, 2), 0);
  std::vector<float> y(tf_model_output_elements(m, 0));
  const float* in[1] = {x->data.data()};
  float* out[1] = {y.data()};
  const int64_t in_n[1] = {static_cast<int64_t>(x->data.size())};
  const int64_t out_n[1] = {static_cast<int64_t>(y.size())};
  EXPECT_EQ(tf_model_run(m, in, in_n, 1, out, out_n, 1), 0) << tf_model_last_error();
  // Twice: buffers reused across runs must not leak state.
  EXPECT_EQ(tf_model_run(m, in, in_n, 1, out, out_n, 1), 0) << tf_model_last_error();
  tf_model_close(m);
  return MaxRelativeError(y, expected->data);
}

// Compiles the exported `model` with `options`, checks its answer against
// PyTorch's (max relative error at most 1e-4) and opens it; null (the test
// failed) when it does not compile or open. `report`, when given, receives
// the compile report.
std::unique_ptr<CompiledModel> CompileMatchingPyTorch(const CompileOptions& options,
                                                      const std::string& model,
                                                      CompileReport* report = nullptr) {
  absl::StatusOr<CompileReport> compiled = CompileModel(options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return nullptr;
  if (report != nullptr) *report = *compiled;
  const double error = ErrorAgainstPyTorch(options.output_dir, model);
  std::cout << model << " (" << options.output_dir << ") max relative error " << error << "\n";
  EXPECT_LE(error, 1e-4) << model;
  absl::StatusOr<std::unique_ptr<CompiledModel>> opened = CompiledModel::Open(options.output_dir);
  EXPECT_TRUE(opened.ok()) << opened.status();
  return opened.ok() ? std::move(*opened) : nullptr;
}

// The same on its default configs.
std::unique_ptr<CompiledModel> CompileMatchingPyTorch(const std::string& model) {
  return CompileMatchingPyTorch({.model = std::string(kOnnxDir) + model + ".onnx",
                                 .target = HostTargetString(),
                                 .output_dir = OutDir(model)},
                                model);
}

TEST(CompiledModelsTest, ResNet18MatchesPyTorch) {
  CompileReport report;
  std::unique_ptr<CompiledModel> compiled =
      CompileMatchingPyTorch({.model = std::string(kOnnxDir) + "resnet18.onnx",
                              .target = HostTargetString(),
                              .output_dir = OutDir("resnet18")},
                             "resnet18", &report);
  ASSERT_NE(compiled, nullptr);
  EXPECT_EQ(report.default_layers, 21);
  // One per distinct task (12), and 7 of them once more for a second
  // epilogue their stores compute (a block's convolution with the residual
  // beside one without).
  EXPECT_EQ(report.kernels, 19);
  // Every epilogue (bias, residual, ReLU) is computed in its kernel's stores.
  int epilogues = 0, in_stores = 0;
  for (const PlanStep& step : compiled->plan().steps) {
    if (step.epilogue.empty()) continue;
    ++epilogues;
    in_stores += step.epilogue.in_stores;
  }
  EXPECT_GT(epilogues, 0);
  EXPECT_EQ(in_stores, epilogues);
}

// With the exp activations in the stores too (opt-in): the squeeze-excite
// network's sigmoids computed by ir::Exp (every activation against libm:
// toolchain/epilogue_stores_test).
TEST(CompiledModelsTest, ExpEpiloguesInStoresMatchPyTorch) {
  for (const char* model : {"se_net"}) {
    std::unique_ptr<CompiledModel> compiled =
        CompileMatchingPyTorch({.model = std::string(kOnnxDir) + model + ".onnx",
                                .target = HostTargetString(),
                                .output_dir = OutDir(std::string(model) + "_exp_stores"),
                                .exp_epilogues_in_stores = true},
                               model);
    ASSERT_NE(compiled, nullptr) << model;
    int exp_in_stores = 0;
    for (const PlanStep& step : compiled->plan().steps) {
      const PointwiseFunc f = step.epilogue.activation.func;
      if (step.epilogue.in_stores && (f == PointwiseFunc::kSigmoid || f == PointwiseFunc::kSilu)) {
        ++exp_in_stores;
      }
    }
    EXPECT_GT(exp_in_stores, 0) << model;
  }
}

// The same models with every epilogue applied from inside its kernel
// through its hook (CompileOptions::epilogue_hook_min_bytes 0, none in the
// stores): blocked and depthwise
// convolutions with residuals and clips, dense layers with bias and ReLU.
TEST(CompiledModelsTest, EpiloguesInsideKernelsMatchPyTorch) {
  for (const char* model : {"resnet18", "mobilenet_v2", "encoder"}) {
    std::unique_ptr<CompiledModel> compiled =
        CompileMatchingPyTorch({.model = std::string(kOnnxDir) + model + ".onnx",
                                .target = HostTargetString(),
                                .output_dir = OutDir(std::string(model) + "_hooked"),
                                .epilogue_hook_min_bytes = 0,
                                .epilogues_in_stores = false},
                               model);
    ASSERT_NE(compiled, nullptr) << model;
    int in_kernel = 0;
    for (const PlanStep& step : compiled->plan().steps) in_kernel += step.epilogue.in_kernel;
    EXPECT_GT(in_kernel, 0) << model;
  }
}

// Only the kernels whose outputs hold at least epilogue_hook_min_bytes apply
// their epilogues themselves: ResNet-18's first convolution (64 x 112 x 112
// floats, 3.06 MiB) and no other above 2 MiB; none above a size no output has.
TEST(CompiledModelsTest, EpiloguesGoInsideTheKernelsWithLargeOutputsOnly) {
  for (const auto& [min_bytes, hooked_steps] :
       {std::pair<int64_t, int>{2 << 20, 1}, std::pair<int64_t, int>{int64_t{1} << 40, 0}}) {
    std::unique_ptr<CompiledModel> compiled =
        CompileMatchingPyTorch({.model = std::string(kOnnxDir) + "resnet18.onnx",
                                .target = HostTargetString(),
                                .output_dir = OutDir("resnet18_hook_threshold"),
                                .epilogue_hook_min_bytes = min_bytes,
                                .epilogues_in_stores = false},
                               "resnet18");
    ASSERT_NE(compiled, nullptr) << min_bytes;
    const ModelPlan& plan = compiled->plan();
    int in_kernel = 0;
    for (const PlanStep& step : plan.steps) {
      if (!step.epilogue.in_kernel) continue;
      ++in_kernel;
      EXPECT_GE(plan.buffers[static_cast<size_t>(step.outputs[0])].elements * 4, min_bytes)
          << step.node;
    }
    EXPECT_EQ(in_kernel, hooked_steps) << min_bytes;
  }
}

// A records file (under OutDir) of one record: `layer`'s task with `config`
// measured at `seconds`; its path.
std::string WriteRecord(const ModelLayer& layer, const Task& task, const Config& config,
                        double seconds, const std::string& target, const std::string& file) {
  Record record;
  record.target = target;
  record.task_name = task.name();
  record.workload_name = layer.workload;
  record.workload_args = layer.args;
  record.config = config.ToJson();
  record.result.costs = {seconds};
  const std::string path = OutDir(file);
  std::ofstream(path) << record.ToLine() << "\n";
  return path;
}

TEST(CompiledModelsTest, MobileNetV2WithARecordMatchesPyTorch) {
  const std::string target = HostTargetString();
  absl::StatusOr<LoadedModel> model =
      LoadModel(std::string(kOnnxDir) + "mobilenet_v2.onnx", OnnxImportOptions{});
  ASSERT_TRUE(model.ok()) << model.status();
  // A record for the first layer with a config the default would not pick.
  const ModelLayer& first = model->layers[0];
  absl::StatusOr<std::unique_ptr<Task>> task = Task::Make("", first.workload, first.args, target);
  ASSERT_TRUE(task.ok()) << task.status();
  absl::StatusOr<Config> config = (*task)->space().Get((*task)->space().size() / 3);
  ASSERT_TRUE(config.ok());
  const std::string records =
      WriteRecord(first, **task, *config, 1e-3, target, "mobilenet_records.jsonl");

  CompileReport report;
  ASSERT_NE(CompileMatchingPyTorch({.model = std::string(kOnnxDir) + "mobilenet_v2.onnx",
                                    .records = records,
                                    .target = target,
                                    .output_dir = OutDir("mobilenet_v2")},
                                   "mobilenet_v2", &report),
            nullptr);
  EXPECT_EQ(report.tuned_layers, 1);
  EXPECT_EQ(report.default_layers, 52);
  ASSERT_FALSE(report.layers.empty());
  EXPECT_THAT(report.layers[0], HasSubstr("mobilenet_records.jsonl:1"));
}

// One nn.TransformerEncoderLayer (d 768, 12 heads, ff 3072, sequence 128):
// its projections on the tuned dense kernels (bias, ReLU and residual in the
// epilogue), the attention products on the tuned batch_matmul kernels, and
// the rest (transposes, slices, softmax, the layer norms' decomposition) as
// runtime tensor operators; the shape arithmetic folded away at compile time.
TEST(CompiledModelsTest, EncoderLayerMatchesPyTorch) {
  CompileReport report;
  std::unique_ptr<CompiledModel> model =
      CompileMatchingPyTorch({.model = std::string(kOnnxDir) + "encoder.onnx",
                              .target = HostTargetString(),
                              .output_dir = OutDir("encoder")},
                             "encoder", &report);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(report.kernels, 6);  // 4 dense (qkv, out, ff1, ff2) + 2 batch_matmul
  // Where the time goes, by step kind (printed, not asserted).
  std::vector<float> x(model->plan().buffers[model->inputs()[0].buffer].elements, 0.5f);
  std::vector<float> y(model->plan().buffers[model->outputs()[0].buffer].elements);
  model->SetProfiling(true);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(model->Run({x.data()}, {y.data()}).ok());
  std::map<std::string, double> by_kind;
  for (size_t i = 0; i < model->plan().steps.size(); ++i) {
    const PlanStep& step = model->plan().steps[i];
    std::string kind = StepOpName(step.op);
    if (step.op == StepOp::kPointwise)
      kind += std::string(":") + PointwiseFuncName(step.activation.func);
    by_kind[kind] += model->step_seconds()[i] / 3;
  }
  std::cout << "encoder: " << model->plan().steps.size() << " steps; ms per run by kind:";
  for (const auto& [kind, seconds] : by_kind) std::cout << " " << kind << " " << seconds * 1e3;
  std::cout << "\n";
  // The kernels' own times, warm and with their weights flushed before each
  // call: every kernel step is timed and no other, and a run after them
  // gives the same answer (they overwrote activations only; a flush writes
  // back, it loses nothing).
  const std::vector<float> before = y;
  for (bool cold : {false, true}) {
    absl::StatusOr<std::vector<double>> alone = model->KernelSecondsAlone(2, cold);
    ASSERT_TRUE(alone.ok()) << alone.status();
    ASSERT_EQ(alone->size(), model->plan().steps.size());
    for (size_t i = 0; i < alone->size(); ++i) {
      const PlanStep& step = model->plan().steps[i];
      if (step.op == StepOp::kKernel) {
        EXPECT_GT((*alone)[i], 0) << step.node << (cold ? " (cold)" : "");
      } else {
        EXPECT_EQ((*alone)[i], 0) << step.node << (cold ? " (cold)" : "");
      }
    }
    ASSERT_TRUE(model->Run({x.data()}, {y.data()}).ok());
    EXPECT_LE(MaxRelativeError(y, before), 1e-6);
  }
}

// A DenseNet block, an Inception block, a CSP-style channel split and a
// ConvNeXt-style permute to NHWC and back: every concatenation's inputs are
// written in place in its output (passes/alias_concats.h), the split's half
// that goes through a convolution is read in place (passes/alias_slices.h;
// the other half is copied into the concat it joins), and both permutes are
// views of NCHW[C]c, and the head's mean over H and W (not kept, as
// ShuffleNet's) is a global average pool of the blocked layout, so the plan
// has no concat, one channel gather, no strided copy, no reduction and no
// relayout before the head left, and the answer is still PyTorch's.
TEST(CompiledModelsTest, ConcatenationsWrittenInPlaceMatchPyTorch) {
  std::unique_ptr<CompiledModel> model = CompileMatchingPyTorch("concat_net");
  ASSERT_NE(model, nullptr);
  int aliases = 0;
  for (const PlanBuffer& buffer : model->plan().buffers) aliases += buffer.alias_of >= 0;
  EXPECT_GE(aliases, 6);
  int gathers = 0, global_pools = 0;
  const std::vector<PlanStep>& steps = model->plan().steps;
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_NE(steps[i].op, StepOp::kConcat) << steps[i].node;
    EXPECT_NE(steps[i].op, StepOp::kStridedCopy) << steps[i].node;
    EXPECT_NE(steps[i].op, StepOp::kReduce) << steps[i].node;
    gathers += steps[i].op == StepOp::kChannelGather;
    if (steps[i].op == StepOp::kGlobalAvgPool) {
      ++global_pools;
      ASSERT_GT(i, 0u);
      EXPECT_NE(steps[i - 1].op, StepOp::kRelayout) << steps[i - 1].node;
    }
  }
  EXPECT_EQ(gathers, 1);
  EXPECT_EQ(global_pools, 1);
}

// The same network with the stem's record writing NCHW32c: the DenseNet
// block's first concatenation joins it with a layer's 16 channels, which 32
// does not divide, so the concat is in NCHW16c (tensor_op_lowering.h
// ConcatBlock): the stem's output relaid into it once, not both through NCHW.
TEST(CompiledModelsTest, AConcatOfMixedBlocksJoinsInACommonBlock) {
  const std::string target = HostTargetString();
  const std::string onnx = std::string(kOnnxDir) + "concat_net.onnx";
  absl::StatusOr<LoadedModel> model = LoadModel(onnx, OnnxImportOptions{});
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelLayer& stem = model->layers[0];
  ASSERT_EQ(stem.args.value("K", 0), 32);
  absl::StatusOr<std::unique_ptr<Task>> task = Task::Make("", stem.workload, stem.args, target);
  ASSERT_TRUE(task.ok()) << task.status();
  std::optional<Config> wide;
  for (int64_t i = 0; i < (*task)->space().size() && !wide; ++i) {
    absl::StatusOr<Config> config = (*task)->space().Get(i);
    ASSERT_TRUE(config.ok()) << config.status();
    if (config->GetInt("tile_oc").value_or(0) == 32) wide = *config;
  }
  ASSERT_TRUE(wide.has_value()) << (*task)->name();
  const std::string records =
      WriteRecord(stem, **task, *wide, 1e-4, target, "concat_net_records.jsonl");
  std::unique_ptr<CompiledModel> compiled = CompileMatchingPyTorch(
      {.model = onnx, .records = records, .target = target, .output_dir = OutDir("concat_mixed")},
      "concat_net");
  ASSERT_NE(compiled, nullptr);
  const ModelPlan& plan = compiled->plan();
  int from_stem = 0;
  for (const PlanStep& step : plan.steps) {
    if (step.op == StepOp::kKernel && step.node == stem.name) {
      EXPECT_EQ(plan.buffers[step.outputs[0]].block, 32);
    }
    if (step.op != StepOp::kRelayout) continue;
    const PlanBuffer& in = plan.buffers[step.inputs[0]];
    const PlanBuffer& out = plan.buffers[step.outputs[0]];
    if (in.block != 32) continue;
    EXPECT_EQ(out.block, 16) << step.node;
    ++from_stem;
  }
  EXPECT_EQ(from_stem, 1);
}

// Two squeeze-excite blocks (passes/fold_channel_scales.h): the first one's
// scale, at 32x32, becomes a scale of its projection's packed weights and
// the projection reads the depthwise output itself; the second's, at 4x4
// (weights of more floats than the activation), stays a channel Mul. The
// answer is PyTorch's either way.
TEST(CompiledModelsTest, SqueezeExciteScalesFoldIntoWeightsWhereThatIsCheaper) {
  std::unique_ptr<CompiledModel> model = CompileMatchingPyTorch("se_net");
  ASSERT_NE(model, nullptr);
  const ModelPlan& plan = model->plan();
  int scales = 0, muls = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    muls += step.op == StepOp::kChannelBinary;
    if (step.op != StepOp::kScaleWeights) continue;
    ++scales;
    // Its output is the staged weights of the kernel that reads it.
    bool read = false;
    for (size_t j = i + 1; j < plan.steps.size(); ++j) {
      const PlanStep& reader = plan.steps[j];
      if (reader.op == StepOp::kKernel && reader.staged.size() == 3 &&
          reader.staged[1] == step.outputs[0]) {
        read = true;
        EXPECT_EQ(plan.buffers[reader.staged[0]].shape, (std::vector<int64_t>{1, 96, 32, 32}));
      }
    }
    EXPECT_TRUE(read) << step.node;
  }
  EXPECT_EQ(scales, 1);
  EXPECT_EQ(muls, 1);
}

TEST(CompiledModelsTest, ErrorsNameWhatIsWrong) {
  const std::string mobilenet = std::string(kOnnxDir) + "mobilenet_v2.onnx";
  const std::string target = HostTargetString();
  // Records only for another target.
  Record record;
  record.target = "llvm -mcpu=some-other-cpu";
  record.task_name = "conv2d_nchwc.x86";
  record.workload_name = "conv2d_nchw";
  record.workload_args = {{"N", 1}};
  record.result.costs = {1e-3};
  const std::string other = OutDir("other_target.jsonl");
  std::ofstream(other) << record.ToLine() << "\n";
  absl::StatusOr<CompileReport> report = CompileModel(
      {.model = mobilenet, .records = other, .target = target, .output_dir = OutDir("e1")});
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.status().message(), HasSubstr("no record for target"));
  EXPECT_THAT(report.status().message(), HasSubstr("llvm -mcpu=some-other-cpu"));
  // A record of a workload the model does not have: a warning naming it.
  record.target = target;
  const std::string foreign = OutDir("foreign.jsonl");
  std::ofstream(foreign) << record.ToLine() << "\n";
  absl::StatusOr<LoadedModel> model = LoadModel(mobilenet, OnnxImportOptions{});
  ASSERT_TRUE(model.ok());
  absl::StatusOr<RecordSelection> selection = SelectRecords(foreign, model->layers, target);
  ASSERT_TRUE(selection.ok()) << selection.status();
  ASSERT_EQ(selection->warnings.size(), 1u);
  EXPECT_THAT(selection->warnings[0], HasSubstr("foreign.jsonl:1: record of conv2d_nchw"));
  EXPECT_THAT(selection->warnings[0], HasSubstr("no layer of the model has that workload"));
  // A corrupt line.
  const std::string corrupt = OutDir("corrupt.jsonl");
  std::ofstream(corrupt) << record.ToLine() << "\n{\"not\": \"a record\"}\n"
                         << record.ToLine() << "\n";
  report = CompileModel(
      {.model = mobilenet, .records = corrupt, .target = target, .output_dir = OutDir("e2")});
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.status().message(), HasSubstr("corrupt.jsonl:2: corrupt record"));
  // An operator compile does not implement, named with its node.
  Graph graph;
  graph.inputs = {"x"};
  graph.outputs = {"y"};
  graph.shapes["x"] = graph.shapes["y"] = TensorShape{kOnnxFloat, {1, 8}};
  graph.nodes.push_back({"lstm_1", "LSTM", {"x"}, {"y"}});
  absl::StatusOr<BuiltPlan> plan =
      LowerModel(graph, {}, [](const ModelLayer&) -> absl::StatusOr<KernelChoice> {
        return absl::InternalError("no kernel expected");
      });
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("node 'lstm_1' (LSTM)"));
  EXPECT_THAT(plan.status().message(), HasSubstr("'LSTM' is not supported"));
  // Built-in names carry no weights.
  report = CompileModel({.model = "resnet-18", .target = target, .output_dir = OutDir("e4")});
  EXPECT_THAT(report.status().message(), HasSubstr("without weights"));
  // An AArch64 library (run under qemu by //examples/aarch64) is refused here by name.
  report = CompileModel({.model = mobilenet,
                         .target = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72",
                         .output_dir = OutDir("e5")});
  ASSERT_TRUE(report.ok()) << report.status();
  TfModel* a64 = nullptr;
  EXPECT_NE(tf_model_open(OutDir("e5").c_str(), &a64), 0);
  EXPECT_THAT(tf_model_last_error(), HasSubstr("was built for aarch64"));
}

TEST(CompiledModelsTest, RunRefusesWrongShapesAndNullBuffers) {
  const std::string dir = OutDir("mobilenet_default");
  absl::StatusOr<CompileReport> report =
      CompileModel({.model = std::string(kOnnxDir) + "mobilenet_v2.onnx",
                    .target = HostTargetString(),
                    .output_dir = dir});
  ASSERT_TRUE(report.ok()) << report.status();
  TfModel* m = nullptr;
  ASSERT_EQ(tf_model_open(dir.c_str(), &m), 0) << tf_model_last_error();
  EXPECT_STREQ(tf_model_input_name(m, 0), "input");
  ASSERT_EQ(tf_model_input_rank(m, 0), 4);
  EXPECT_EQ(tf_model_input_dims(m, 0)[1], 3);
  EXPECT_EQ(tf_model_output_elements(m, 0), 1000);
  EXPECT_EQ(tf_model_input_name(m, 1), nullptr);
  std::vector<float> x(3 * 224 * 224), y(1000);
  const float* in[1] = {x.data()};
  float* out[1] = {y.data()};
  int64_t in_n[1] = {3 * 224 * 223}, out_n[1] = {1000};
  EXPECT_NE(tf_model_run(m, in, in_n, 1, out, out_n, 1), 0);
  EXPECT_THAT(tf_model_last_error(), HasSubstr("input 'input' has shape [1, 3, 224, 224]"));
  in_n[0] = 3 * 224 * 224;
  float* null_out[1] = {nullptr};
  EXPECT_NE(tf_model_run(m, in, in_n, 1, null_out, out_n, 1), 0);
  EXPECT_THAT(tf_model_last_error(), HasSubstr("output 'output' is a null buffer"));
  EXPECT_NE(tf_model_set_threads(m, 0), 0);
  EXPECT_EQ(tf_model_run(m, in, in_n, 1, out, out_n, 1), 0) << tf_model_last_error();
  tf_model_close(m);
}

// MaxViT's and Swin-V2's attention as exported (export_onnx.py's
// window_attention): its Einsums become tuned batch_matmuls, its
// F.normalize a ReduceSum of squares, the MLP over its constant table is
// folded at load, its masked_fill is one select step, and its windows
// reshaped back into an image feed a convolution.
TEST(CompiledModelsTest, WindowAttentionCompilesAndMatchesPyTorch) {
  CompileReport report;
  std::unique_ptr<CompiledModel> model =
      CompileMatchingPyTorch({.model = std::string(kOnnxDir) + "window_attention.onnx",
                              .target = HostTargetString(),
                              .output_dir = OutDir("window_attention")},
                             "window_attention", &report);
  ASSERT_NE(model, nullptr);
  int selects = 0, einsum_kernels = 0;
  for (const PlanStep& step : model->plan().steps) {
    selects += step.op == StepOp::kBroadcast && step.binary == BinaryFunc::kSelect;
    einsum_kernels += step.op == StepOp::kKernel && absl::StrContains(step.node, "Einsum");
  }
  EXPECT_EQ(selects, 1);
  EXPECT_EQ(einsum_kernels, 2);
  // The stem, qkv, projection, convolution, head and the two products.
  EXPECT_EQ(report.default_layers, 7);
}

}  // namespace
}  // namespace tunefleet

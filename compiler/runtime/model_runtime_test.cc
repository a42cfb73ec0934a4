// The runtime's checks that need no compiled model: plan parsing, the CPU
// feature check, the C API's errors, and steps of plans linked into the test
// (OpenLinked) run and checked at open.
#include "compiler/runtime/model_runtime.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/runtime/plan.h"
#include "compiler/runtime/tunefleet_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ModelRuntimeTest, PlanRoundTripsThroughJson) {
  ModelPlan plan;
  plan.target = "llvm -mcpu=skylake";
  plan.triple = "x86_64-unknown-linux-gnu";
  plan.required_features = {"avx2", "fma"};
  plan.buffers = {{"input", 12, -1}, {"w", 4, 0}, {"output", 12, -1}};
  plan.inputs = {{"input", 0, {1, 3, 2, 2}}};
  plan.outputs = {{"output", 2, {1, 3, 2, 2}}};
  PlanStep step;
  step.op = StepOp::kKernel;
  step.node = "conv";
  step.symbol = "tf_kernel_0";
  step.inputs = {0, 1};
  step.outputs = {2};
  step.staged = {0, 1, 2};
  // A Clip with no min: its bound is -inf, which JSON spells as a string.
  step.epilogue.activation = {PointwiseFunc::kClip, -INFINITY, 6};
  step.epilogue.block = 3;
  step.epilogue.channels = 3;
  plan.buffers[2].shape = {1, 3, 2, 2};
  plan.buffers[2].block = 3;
  plan.buffers[2].row_width = 2;
  plan.steps.push_back(step);
  PlanStep pointwise{.op = StepOp::kPointwise, .node = "hs", .inputs = {2}, .outputs = {2}};
  pointwise.activation = {PointwiseFunc::kHardSigmoid, 1.0f / 6, 0.5f};
  plan.steps.push_back(pointwise);
  absl::StatusOr<ModelPlan> back = ModelPlan::FromJson(plan.ToJson().dump());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToJson(), plan.ToJson());
  EXPECT_EQ(back->steps[0].epilogue.activation.alpha, -INFINITY);
  EXPECT_EQ(back->steps[1].activation.func, PointwiseFunc::kHardSigmoid);
  EXPECT_FLOAT_EQ(back->steps[1].activation.alpha, 1.0f / 6);
}

TEST(ModelRuntimeTest, PlanOfAnotherVersionOrWithBadBufferIsRefused) {
  ModelPlan plan;
  nlohmann::json j = plan.ToJson();
  j["version"] = 99;
  EXPECT_THAT(ModelPlan::FromJson(j.dump()).status().message(), HasSubstr("version 99"));
  plan.steps.push_back(PlanStep{.op = StepOp::kPointwise, .node = "r", .inputs = {3}});
  EXPECT_THAT(ModelPlan::FromJson(plan.ToJson().dump()).status().message(),
              HasSubstr("step 'r' names buffer 3"));
  j = plan.ToJson();
  j["steps"][0]["op"] = "lstm";
  EXPECT_THAT(ModelPlan::FromJson(j.dump()).status().message(),
              HasSubstr("unknown step op 'lstm'"));
}

TEST(ModelRuntimeTest, ArenaSharesMemoryOnlyBetweenBuffersNeverAliveTogether) {
  // input -> a -> b -> output: a dies when b is written, so input (dead after
  // step 0) and b may share, and a and output may share; a weight stays out.
  ModelPlan plan;
  plan.buffers = {
      {"input", 100, -1}, {"a", 100, -1}, {"b", 100, -1}, {"output", 100, -1}, {"w", 10, 0}};
  plan.inputs = {{"input", 0, {100}}};
  plan.outputs = {{"output", 3, {100}}};
  plan.steps = {PlanStep{.op = StepOp::kPointwise, .node = "s0", .inputs = {0}, .outputs = {1}},
                PlanStep{.op = StepOp::kPointwise, .node = "s1", .inputs = {1}, .outputs = {2}},
                PlanStep{.op = StepOp::kAdd, .node = "s2", .inputs = {2, 2}, .outputs = {3}}};
  int64_t floats = 0;
  const std::vector<int64_t> offsets = PlanArena(plan, &floats);
  EXPECT_EQ(offsets[4], -1);
  EXPECT_EQ(floats, 2 * 112);  // two live at a time, each rounded to 64 bytes
  for (int x = 0; x < 4; ++x) {
    for (int y = x + 1; y < 4; ++y) {
      const bool alive_together = y == x + 1;
      if (alive_together) {
        EXPECT_NE(offsets[x], offsets[y]) << x << " " << y;
      }
    }
  }
}

TEST(ModelRuntimeTest, MissingCpuFeaturesAreNamed) {
  const std::string flags = "flags\t\t: fpu sse4_2 avx avx2 fma";
  EXPECT_TRUE(MissingCpuFeatures({"avx2", "fma"}, flags).empty());
  EXPECT_THAT(MissingCpuFeatures({"avx2", "avx512f", "avx512bw"}, flags),
              ElementsAre("avx512f", "avx512bw"));
  EXPECT_THAT(MissingCpuFeatures({"fp", "asimd", "sve"}, "fp asimd evtstrm"), ElementsAre("sve"));
}

TEST(ModelRuntimeTest, OpeningAMissingModelNamesIt) {
  TfModel* model = reinterpret_cast<TfModel*>(1);
  EXPECT_NE(tf_model_open("no/such/dir", &model), 0);
  EXPECT_EQ(model, nullptr);
  EXPECT_THAT(tf_model_last_error(), HasSubstr("no/such/dir does not exist"));
}

TEST(ModelRuntimeTest, OpeningSomethingThatIsNotALibraryIsRefused) {
  const std::string path = ::testing::TempDir() + "/not_a_model.so";
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("hello, this is text and not an ELF file", f);
  fclose(f);
  TfModel* model = nullptr;
  EXPECT_NE(tf_model_open(path.c_str(), &model), 0);
  EXPECT_THAT(tf_model_last_error(), HasSubstr("not a shared library"));
}

// A model of one scale_weights step linked into the test (OpenLinked):
// packed weights [K/ob = 2][C/ib = 2][R*S = 1][ib = 2][ob = 4] come out
// times s[c] along their input channels; a step whose shape does not fit
// its buffers is refused when the model opens, naming it.
TEST(ModelRuntimeTest, ScaleWeightsScalesEachInputChannelAndABadOneIsRefused) {
  alignas(64) static float weights[32];
  for (int i = 0; i < 32; ++i) weights[i] = static_cast<float>(i + 1);
  auto plan_with = [](std::vector<int64_t> in_shape) {
    ModelPlan plan;
    plan.buffers = {{"s", 4, -1}, {"w", 32, 0}, {"scaled", 32, -1}};
    plan.buffers[0].shape = {1, 4};
    plan.buffers[2].shape = {32};
    plan.inputs = {{"s", 0, {1, 4}}};
    plan.outputs = {{"scaled", 2, {32}}};
    plan.weight_floats = 32;
    plan.steps.push_back(PlanStep{.op = StepOp::kScaleWeights,
                                  .node = "se_mul",
                                  .inputs = {1, 0},
                                  .outputs = {2},
                                  .in_shape = std::move(in_shape)});
    return plan.ToJson().dump();
  };
  const std::string good = plan_with({2, 2, 1, 2, 4});
  const LinkedSymbol symbols[] = {
      {kPlanSymbol, good.c_str()}, {kWeightsSymbol, weights}, {nullptr, nullptr}};
  absl::StatusOr<std::unique_ptr<CompiledModel>> model = CompiledModel::OpenLinked(symbols);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::vector<float> s = {0.5f, 2.0f, -1.0f, 3.0f};
  std::vector<float> out(32);
  ASSERT_TRUE((*model)->Run({s.data()}, {out.data()}).ok());
  for (int at = 0; at < 32; ++at) {
    const int c = (at / 8) % 2 * 2 + at % 8 / 4;  // input block, then the lane within it
    EXPECT_EQ(out[at], weights[at] * s[c]) << at;
  }

  const std::string bad = plan_with({2, 2, 1, 2, 8});  // 64 floats of 32
  const LinkedSymbol bad_symbols[] = {
      {kPlanSymbol, bad.c_str()}, {kWeightsSymbol, weights}, {nullptr, nullptr}};
  absl::StatusOr<std::unique_ptr<CompiledModel>> refused = CompiledModel::OpenLinked(bad_symbols);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("'se_mul' (scale_weights)"));
}

// The same for a squeeze-excite channel Mul: x [1, 8, 2, 2] times s[c]
// (a constant here), and a step whose channels disagree with x's refused.
TEST(ModelRuntimeTest, ChannelMulScalesEachChannelAndABadOneIsRefused) {
  alignas(64) static float scales[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  auto plan_with = [](std::vector<int64_t> in_shape) {
    ModelPlan plan;
    plan.buffers = {{"x", 32, -1}, {"s", 8, 0}, {"y", 32, -1}};
    plan.buffers[0].shape = plan.buffers[2].shape = {1, 8, 2, 2};
    plan.inputs = {{"x", 0, {1, 8, 2, 2}}};
    plan.outputs = {{"y", 2, {1, 8, 2, 2}}};
    plan.weight_floats = 8;
    PlanStep mul{.op = StepOp::kChannelBinary,
                 .node = "se_mul",
                 .inputs = {0, 1},
                 .outputs = {2},
                 .in_shape = std::move(in_shape)};
    mul.binary = BinaryFunc::kMul;
    plan.steps.push_back(mul);
    return plan.ToJson().dump();
  };
  const std::string good = plan_with({1, 8});
  const LinkedSymbol symbols[] = {
      {kPlanSymbol, good.c_str()}, {kWeightsSymbol, scales}, {nullptr, nullptr}};
  absl::StatusOr<std::unique_ptr<CompiledModel>> model = CompiledModel::OpenLinked(symbols);
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<float> x(32), y(32);
  for (int i = 0; i < 32; ++i) x[i] = 0.25f * static_cast<float>(i);
  ASSERT_TRUE((*model)->Run({x.data()}, {y.data()}).ok());
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], x[i] * scales[i / 4]) << i;

  const std::string bad = plan_with({1, 4});  // 4 channels of x's 8
  const LinkedSymbol bad_symbols[] = {
      {kPlanSymbol, bad.c_str()}, {kWeightsSymbol, scales}, {nullptr, nullptr}};
  absl::StatusOr<std::unique_ptr<CompiledModel>> refused = CompiledModel::OpenLinked(bad_symbols);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("'se_mul' (channel_binary)"));
}

// softmax(x + bias) in one step: x [2, 3] plus a bias of 3 (a constant,
// the same for both rows); a bias whose strides reach past its buffer is
// refused when the model opens, naming the step.
TEST(ModelRuntimeTest, SoftmaxOfASumRunsAndABiasPastItsBufferIsRefused) {
  alignas(64) static float bias[3] = {0.5f, -1.0f, 2.0f};
  auto plan_with = [](std::vector<int64_t> b_strides) {
    ModelPlan plan;
    plan.buffers = {{"x", 6, -1}, {"bias", 3, 0}, {"p", 6, -1}};
    plan.buffers[0].shape = plan.buffers[2].shape = {2, 3};
    plan.buffers[1].shape = {3};
    plan.inputs = {{"x", 0, {2, 3}}};
    plan.outputs = {{"p", 2, {2, 3}}};
    plan.weight_floats = 3;
    PlanStep softmax{.op = StepOp::kSoftmax,
                     .node = "attn_softmax",
                     .inputs = {0, 1},
                     .outputs = {2},
                     .in_shape = {2, 3, 1},
                     .out_shape = {2, 3}};
    softmax.b_strides = std::move(b_strides);
    plan.steps.push_back(softmax);
    return plan.ToJson().dump();
  };
  const std::string good = plan_with({0, 1});
  const LinkedSymbol symbols[] = {
      {kPlanSymbol, good.c_str()}, {kWeightsSymbol, bias}, {nullptr, nullptr}};
  absl::StatusOr<std::unique_ptr<CompiledModel>> model = CompiledModel::OpenLinked(symbols);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::vector<float> x = {1, 2, 3, -1, 0, 4};
  std::vector<float> p(6);
  ASSERT_TRUE((*model)->Run({x.data()}, {p.data()}).ok());
  for (int r = 0; r < 2; ++r) {
    double sum = 0;
    for (int k = 0; k < 3; ++k) sum += std::exp(static_cast<double>(x[r * 3 + k]) + bias[k]);
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(p[r * 3 + k], std::exp(static_cast<double>(x[r * 3 + k]) + bias[k]) / sum, 1e-6);
    }
  }

  const std::string bad = plan_with({3, 1});  // the second row's bias at 3..5 of 3 floats
  const LinkedSymbol bad_symbols[] = {
      {kPlanSymbol, bad.c_str()}, {kWeightsSymbol, bias}, {nullptr, nullptr}};
  absl::StatusOr<std::unique_ptr<CompiledModel>> refused = CompiledModel::OpenLinked(bad_symbols);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("'attn_softmax' (softmax of a sum)"));
}

}  // namespace
}  // namespace tunefleet

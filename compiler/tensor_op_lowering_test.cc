// Constant folding of an exporter's shape arithmetic, and tensor operators
// lowered at compile time and run by the runtime (ops.h) against values
// worked out by hand.
#include "compiler/tensor_op_lowering.h"

#include <cmath>

#include "compiler/runtime/ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/graph/fold_constants.h"
#include "tuner_core/graph/infer_shapes.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A serial TfRuntime for RunTensorOp.
void SerialFor(void*, int64_t n, TfParallelBody body, void* closure) {
  for (int64_t i = 0; i < n; ++i) body(i, closure);
}
const TfRuntime kSerial = {TF_KERNEL_ABI_VERSION, 1, nullptr, SerialFor, nullptr, nullptr};

ConstantTensor Ints(std::vector<int64_t> values) {
  ConstantTensor t;
  t.shape = {kOnnxInt64, {static_cast<int64_t>(values.size())}};
  t.i64 = std::move(values);
  return t;
}

std::vector<float> RunStep(const PlanStep& step, const std::vector<std::vector<float>>& inputs,
                           int64_t out_elements) {
  std::vector<const float*> operands;
  for (const auto& v : inputs) operands.push_back(v.data());
  std::vector<float> out(out_elements);
  RunTensorOp(step, operands, out.data(), out_elements, &kSerial);
  return out;
}

// x [2, 6]; Shape -> Gather(-1) -> Div 3 gives 2, the ends of a Slice of
// the last axis (as PyTorch writes its q/k/v split); shape inference does
// not know the Slice's shape.
Graph SplitGraph() {
  Graph g;
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.shapes["x"] = {kOnnxFloat, {2, 6}};
  g.constants["minus_one"] = Ints({-1});
  g.constants["three"] = Ints({3});
  g.constants["zero"] = Ints({0});
  g.nodes.push_back({"shape", "Shape", {"x"}, {"s"}});
  g.nodes.push_back({"gather", "Gather", {"s", "minus_one"}, {"last"}});
  g.nodes.push_back({"div", "Div", {"last", "three"}, {"third"}});
  g.nodes.push_back({"slice", "Slice", {"x", "zero", "third", "minus_one"}, {"y"}});
  return g;
}

TEST(TensorOpLoweringTest, FoldsShapeArithmeticAndSlices) {
  absl::StatusOr<Graph> folded = FoldConstants(SplitGraph());
  ASSERT_TRUE(folded.ok()) << folded.status();
  ASSERT_EQ(folded->nodes.size(), 1u);  // only the Slice is left
  EXPECT_THAT(folded->constants.at("third").i64, ElementsAre(2));
  ASSERT_TRUE(InferShapes(&*folded).ok());
  EXPECT_THAT(folded->shapes.at("y").dims, ElementsAre(2, 2));
  absl::StatusOr<LoweredTensorOp> op = LowerTensorOp(*folded, folded->nodes[0], kLowerSlice);
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(op->step.op, StepOp::kStridedCopy);
  EXPECT_THAT(RunStep(op->step, {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}, 4),
              ElementsAre(0, 1, 6, 7));
}

TEST(TensorOpLoweringTest, TransposesBroadcastsAndReduces) {
  Graph g;
  g.shapes["x"] = {kOnnxFloat, {2, 3}};
  g.shapes["t"] = {kOnnxFloat, {3, 2}};
  g.shapes["row"] = {kOnnxFloat, {3}};
  g.shapes["sum"] = g.shapes["x"];
  g.shapes["mean"] = {kOnnxFloat, {2, 1}};
  g.constants["row"].shape = g.shapes["row"];
  g.constants["row"].f32 = {10, 20, 30};
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  GraphNode transpose{"t", "Transpose", {"x"}, {"t"}};
  transpose.attributes["perm"] = {1, 0};
  auto lowered = LowerTensorOp(g, transpose, kLowerTranspose);
  ASSERT_TRUE(lowered.ok());
  EXPECT_THAT(RunStep(lowered->step, {x}, 6), ElementsAre(1, 4, 2, 5, 3, 6));

  lowered = LowerTensorOp(g, {"add", "Add", {"x", "row"}, {"sum"}}, kLowerBinary);
  ASSERT_TRUE(lowered.ok());
  EXPECT_THAT(lowered->operands, ElementsAre("x", "row"));
  EXPECT_THAT(RunStep(lowered->step, {x, {10, 20, 30}}, 6), ElementsAre(11, 22, 33, 14, 25, 36));

  GraphNode mean{"mean", "ReduceMean", {"x"}, {"mean"}};
  mean.attributes["axes"] = {-1};
  lowered = LowerTensorOp(g, mean, kLowerReduce);
  ASSERT_TRUE(lowered.ok());
  EXPECT_THAT(RunStep(lowered->step, {x}, 2), ElementsAre(2, 5));

  g.shapes["mean"] = {kOnnxFloat, {}};
  mean.attributes["axes"] = {0, 1};
  lowered = LowerTensorOp(g, mean, kLowerReduce);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_THAT(RunStep(lowered->step, {x}, 1), ElementsAre(3.5f));
  GraphNode max{"max", "ReduceMax", {"x"}, {"mean"}};
  EXPECT_THAT(RunStep(LowerTensorOp(g, max, kLowerReduce)->step, {x}, 1), ElementsAre(6));

  // [2, 3, 2]: axes 0 and 2 are not adjacent.
  g.shapes["x3"] = {kOnnxFloat, {2, 3, 2}};
  GraphNode apart{"apart", "ReduceSum", {"x3"}, {"mean"}};
  apart.attributes["axes"] = {0, 2};
  lowered = LowerTensorOp(g, apart, kLowerReduce);
  ASSERT_FALSE(lowered.ok());
  EXPECT_THAT(lowered.status().message(), HasSubstr("node 'apart' (ReduceSum)"));
}

// A 4-D transpose and a broadcast add over more rows than one task takes
// (tasks start mid-shape and step their coordinates row by row).
TEST(TensorOpLoweringTest, FourDimensionalTransposeAndBroadcastAcrossTasks) {
  const std::vector<int64_t> dims = {2, 30, 40, 3};
  Graph g;
  g.shapes["x"] = {kOnnxFloat, dims};
  g.shapes["t"] = {kOnnxFloat, {3, 2, 40, 30}};
  g.shapes["b"] = {kOnnxFloat, {30, 1, 3}};
  g.shapes["sum"] = g.shapes["x"];
  std::vector<float> x(2 * 30 * 40 * 3), b(30 * 3);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.5f * static_cast<float>(i);
  g.constants["b"].shape = g.shapes["b"];
  g.constants["b"].f32 = b;
  GraphNode transpose{"t", "Transpose", {"x"}, {"t"}};
  transpose.attributes["perm"] = {3, 0, 2, 1};
  auto lowered = LowerTensorOp(g, transpose, kLowerTranspose);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const std::vector<float> t = RunStep(lowered->step, {x}, static_cast<int64_t>(x.size()));
  auto at = [&](int64_t n, int64_t h, int64_t w, int64_t c) {
    return ((n * 30 + h) * 40 + w) * 3 + c;
  };
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t w = 0; w < 40; ++w)
        for (int64_t h = 0; h < 30; ++h) {
          ASSERT_EQ(t[((c * 2 + n) * 40 + w) * 30 + h], x[at(n, h, w, c)]) << c << n << w << h;
        }
  lowered = LowerTensorOp(g, {"add", "Add", {"x", "b"}, {"sum"}}, kLowerBinary);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const std::vector<float> sum = RunStep(lowered->step, {x, b}, static_cast<int64_t>(x.size()));
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t h = 0; h < 30; ++h)
      for (int64_t w = 0; w < 40; ++w)
        for (int64_t c = 0; c < 3; ++c) {
          ASSERT_EQ(sum[at(n, h, w, c)], x[at(n, h, w, c)] + b[h * 3 + c]) << n << h << w << c;
        }
}

// SqueezeNet's / DenseNet's channel concatenation: shapes inferred, the
// inputs joined along the axis, an input that does not fit refused.
TEST(TensorOpLoweringTest, ConcatJoinsAlongTheAxis) {
  Graph g;
  g.shapes["a"] = {kOnnxFloat, {2, 2, 2}};
  g.shapes["b"] = {kOnnxFloat, {2, 1, 2}};
  GraphNode concat{"cat", "Concat", {"a", "b"}, {"y"}};
  concat.attributes["axis"] = -2;
  g.nodes.push_back(concat);
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_THAT(g.shapes.at("y").dims, ElementsAre(2, 3, 2));
  auto lowered = LowerTensorOp(g, concat, kLowerConcat);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_THAT(lowered->operands, ElementsAre("a", "b"));
  EXPECT_THAT(RunStep(lowered->step, {{1, 2, 3, 4, 5, 6, 7, 8}, {10, 20, 30, 40}}, 12),
              ElementsAre(1, 2, 3, 4, 10, 20, 5, 6, 7, 8, 30, 40));
  g.shapes["c"] = {kOnnxFloat, {3, 1, 2}};
  Graph bad = g;
  bad.shapes.erase("y");
  bad.nodes = {{"cat2", "Concat", {"a", "c"}, {"y"}}};
  bad.nodes[0].attributes["axis"] = 1;
  const absl::Status status = InferShapes(&bad);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("node 'cat2' (Concat)"));
}

// DenseNet's BatchNormalization that follows no Conv: per channel,
// y = (x - mean) / sqrt(var + epsilon) * scale + B.
TEST(TensorOpLoweringTest, StandaloneBatchNormalization) {
  Graph g;
  g.shapes["x"] = {kOnnxFloat, {1, 2, 2}};
  for (const char* c : {"scale", "b", "mean", "var"}) {
    g.shapes[c] = {kOnnxFloat, {2}};
    g.constants[c].shape = g.shapes[c];
  }
  g.constants["scale"].f32 = {2, 1};
  g.constants["b"].f32 = {1, 0};
  g.constants["mean"].f32 = {1, -1};
  g.constants["var"].f32 = {4, 0.25f};
  GraphNode bn{"bn", "BatchNormalization", {"x", "scale", "b", "mean", "var"}, {"y"}};
  bn.attributes["epsilon"] = 0.0;
  g.nodes.push_back(bn);
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_THAT(g.shapes.at("y").dims, ElementsAre(1, 2, 2));
  auto lowered = LowerTensorOp(g, bn, kLowerBatchNorm);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_THAT(lowered->operands, ElementsAre("x", "scale", "b", "mean", "var"));
  // channel 0: (x - 1) / 2 * 2 + 1 = x; channel 1: (x + 1) / 0.5 = 2x + 2.
  const std::vector<std::vector<float>> in = {{3, 5, 0, 1}, {2, 1}, {1, 0}, {1, -1}, {4, 0.25f}};
  std::vector<float> y(4);
  BatchNorm(lowered->step, PlanBuffer{"x", 4, -1, {1, 2, 2}},
            {in[0].data(), in[1].data(), in[2].data(), in[3].data(), in[4].data()}, y.data(),
            &kSerial);
  EXPECT_THAT(y, ElementsAre(3, 5, 2, 4));
  g.constants["var"].f32 = {4, 0.25f, 1};
  g.shapes["var"] = {kOnnxFloat, {3}};
  lowered = LowerTensorOp(g, bn, kLowerBatchNorm);
  ASSERT_FALSE(lowered.ok());
  EXPECT_THAT(lowered.status().message(), HasSubstr("is not one float per channel"));
}

// [1, 2, 3]: each channel's 3 values normalised, then its own scale and B.
TEST(TensorOpLoweringTest, InstanceNormalizationPerChannel) {
  Graph g;
  g.shapes["x"] = {kOnnxFloat, {1, 2, 3}};
  for (const char* c : {"scale", "b"}) {
    g.shapes[c] = {kOnnxFloat, {2}};
    g.constants[c].shape = g.shapes[c];
  }
  GraphNode node{"in", "InstanceNormalization", {"x", "scale", "b"}, {"y"}};
  node.attributes["epsilon"] = 0.0;
  g.nodes.push_back(node);
  ASSERT_TRUE(InferShapes(&g).ok());
  auto lowered = LowerTensorOp(g, node, kLowerInstanceNorm);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  // {1, 2, 3}: std dev sqrt(2/3); {0, 0, 6}: mean 2, std dev 2 sqrt(2).
  const float k = std::sqrt(1.5f), r = std::sqrt(0.5f);
  const std::vector<float> y = RunStep(lowered->step, {{1, 2, 3, 0, 0, 6}, {2, 1}, {0, 1}}, 6);
  const std::vector<float> want = {-2 * k, 0, 2 * k, 1 - r, 1 - r, 1 + 2 * r};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(y[i], want[i], 1e-5f) << i;
  GraphNode bad = node;
  bad.inputs.pop_back();
  EXPECT_THAT(LowerTensorOp(g, bad, kLowerInstanceNorm).status().message(),
              HasSubstr("needs input, scale and B"));
}

// [1, 1, 2, 2] resized by 2: linear (align_corners) along both image axes
// (the row-at-a-time path), and linear along the channel axis too (each
// element from its taps).
TEST(TensorOpLoweringTest, ResizeLinearOnImagesAndOnAnyAxis) {
  Graph g;
  g.shapes["x"] = {kOnnxFloat, {1, 1, 2, 2}};
  g.constants["roi"].shape = {kOnnxFloat, {0}};
  g.constants["scales"].shape = {kOnnxFloat, {4}};
  g.constants["scales"].f32 = {1, 1, 1.5f, 1.5f};
  GraphNode node{"up", "Resize", {"x", "roi", "scales"}, {"y"}};
  node.attributes["mode"] = "linear";
  node.attributes["coordinate_transformation_mode"] = "align_corners";
  g.nodes.push_back(node);
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_THAT(g.shapes.at("y").dims, ElementsAre(1, 1, 3, 3));
  auto lowered = LowerTensorOp(g, node, kLowerResize);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_THAT(RunStep(lowered->step, {{0, 2, 4, 6}}, 9), ElementsAre(0, 1, 2, 2, 3, 4, 4, 5, 6));
  // Two channels from one: [1, 1, 1, 2] -> [1, 2, 1, 2], asymmetric, so
  // channel 1 reads channel 0 (the edge) and the image is copied.
  g.shapes["x"] = {kOnnxFloat, {1, 1, 1, 2}};
  g.constants["scales"].f32 = {1, 2, 1, 1};
  node.attributes["coordinate_transformation_mode"] = "asymmetric";
  g.shapes.erase("y");
  ASSERT_TRUE(InferShapes(&g).ok());
  lowered = LowerTensorOp(g, node, kLowerResize);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_THAT(RunStep(lowered->step, {{3, 5}}, 4), ElementsAre(3, 5, 3, 5));
  node.attributes["antialias"] = 1;
  EXPECT_THAT(LowerTensorOp(g, node, kLowerResize).status().message(),
              HasSubstr("antialias is not supported"));
}

// DenseNet's channel concatenation of blocked buffers: NCHW2c inputs of 2
// and 4 channels join block by block into an NCHW2c output; a Concat whose
// channels the block does not divide is left to the plain lowering.
TEST(TensorOpLoweringTest, ChannelConcatOfBlockedBuffersJoinsWholeBlocks) {
  Graph g;
  g.shapes["a"] = {kOnnxFloat, {1, 2, 1, 2}};
  g.shapes["b"] = {kOnnxFloat, {1, 4, 1, 2}};
  g.shapes["y"] = {kOnnxFloat, {1, 6, 1, 2}};
  GraphNode concat{"cat", "Concat", {"a", "b"}, {"y"}};
  concat.attributes["axis"] = 1;
  absl::StatusOr<std::optional<LoweredTensorOp>> lowered = LowerBlockedConcat(g, concat, 2);
  ASSERT_TRUE(lowered.ok() && lowered->has_value()) << lowered.status();
  EXPECT_THAT((*lowered)->step.in_shape, ElementsAre(1, 4, 1, 2));
  // a: channels 0-1 at 2 positions, NCHW2c: [p0c0, p0c1, p1c0, p1c1].
  const std::vector<float> a = {0, 1, 10, 11};
  const std::vector<float> b = {2, 3, 12, 13, 4, 5, 14, 15};  // two blocks of channels 2-5
  EXPECT_THAT(RunStep((*lowered)->step, {a, b}, 12),
              ElementsAre(0, 1, 10, 11, 2, 3, 12, 13, 4, 5, 14, 15));
  lowered = LowerBlockedConcat(g, concat, 4);  // 2 channels are not a block of 4
  ASSERT_TRUE(lowered.ok());
  EXPECT_FALSE(lowered->has_value());
}

// The block a concatenation joins in: the one most of its inputs already
// have that divides every input's channels, else their common divisor.
TEST(TensorOpLoweringTest, ConcatBlockRelaysTheFewestElements) {
  // GoogLeNet's inception4a: 32c, 16c, 16c, 32c producers of 192, 208, 48
  // and 64 channels; 32 does not divide 208.
  EXPECT_EQ(
      ConcatBlock(
          {{192, 32, 192 * 196}, {208, 16, 208 * 196}, {48, 16, 48 * 196}, {64, 32, 64 * 196}}),
      16);
  // Every part in 32c but one of 208 channels: their common 16.
  EXPECT_EQ(ConcatBlock({{192, 32, 192}, {208, 32, 208}}), 16);
  // The block that moves fewer elements wins, not the first input's.
  EXPECT_EQ(ConcatBlock({{64, 16, 64}, {256, 32, 256}, {64, 32, 64}}), 32);
  // A tie: the larger block.
  EXPECT_EQ(ConcatBlock({{64, 16, 100}, {64, 32, 100}}), 32);
  // An NCHW input among blocked ones is relaid into their block.
  EXPECT_EQ(ConcatBlock({{3, 1, 3}, {16, 16, 16}}), 1);  // 3 channels: no block divides
  EXPECT_EQ(ConcatBlock({{8, 1, 8}, {16, 16, 16}}), 8);
  // Common divisors below a vector of 4 are not taken: NCHW.
  EXPECT_EQ(ConcatBlock({{6, 16, 6}, {16, 16, 16}}), 1);
  EXPECT_EQ(ConcatBlock({{12, 12, 12}, {16, 16, 16}}), 4);
  EXPECT_EQ(ConcatBlock({}), 1);
}

// Slices and Gathers of a 4-D tensor's channels alone are channel gathers
// (the input channel of each output channel); along any other axis, or
// with indices computed at run time, they are not.
TEST(TensorOpLoweringTest, ChannelSlicesAndGathersAreChannelMaps) {
  Graph g;
  g.shapes["x"] = {kOnnxFloat, {2, 8, 3, 3}};
  g.constants["starts"] = Ints({1});
  g.constants["ends"] = Ints({8});
  g.constants["channels"] = Ints({1});
  g.constants["rows"] = Ints({2});
  g.constants["steps"] = Ints({3});
  g.constants["picks"] = Ints({7, -8, 2});
  const GraphNode slice{"slice", "Slice", {"x", "starts", "ends", "channels", "steps"}, {"y"}};
  EXPECT_THAT(ChannelGatherOf(g, slice).value_or(std::vector<int64_t>{}), ElementsAre(1, 4, 7));
  const GraphNode rows{"rows", "Slice", {"x", "starts", "ends", "rows"}, {"y"}};
  EXPECT_FALSE(ChannelGatherOf(g, rows).has_value());
  GraphNode gather{"gather", "Gather", {"x", "picks"}, {"y"}};
  gather.attributes["axis"] = 1;
  EXPECT_THAT(ChannelGatherOf(g, gather).value_or(std::vector<int64_t>{}), ElementsAre(7, 0, 2));
  gather.attributes["axis"] = 2;
  EXPECT_FALSE(ChannelGatherOf(g, gather).has_value());
  gather.attributes["axis"] = 1;
  gather.inputs[1] = "ids";  // not a constant
  EXPECT_FALSE(ChannelGatherOf(g, gather).has_value());
}

// Pad in each mode, against ONNX's definitions worked by hand on a 2x2
// image padded by one column on the left and one row at the bottom.
TEST(TensorOpLoweringTest, PadInEveryMode) {
  Graph g;
  g.shapes["x"] = {kOnnxFloat, {1, 1, 2, 2}};
  g.constants["pads"] = Ints({0, 0, 0, 1, 0, 0, 1, 0});
  GraphNode pad{"pad", "Pad", {"x", "pads"}, {"y"}};
  g.nodes.push_back(pad);
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_THAT(g.shapes.at("y").dims, ElementsAre(1, 1, 3, 3));
  const std::vector<float> x = {1, 2, 3, 4};
  auto lowered = LowerTensorOp(g, pad, kLowerPad);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_THAT(RunStep(lowered->step, {x}, 9), ElementsAre(0, 1, 2, 0, 3, 4, 0, 0, 0));
  pad.attributes["mode"] = "edge";
  lowered = LowerTensorOp(g, pad, kLowerPad);
  ASSERT_TRUE(lowered.ok());
  EXPECT_THAT(RunStep(lowered->step, {x}, 9), ElementsAre(1, 1, 2, 3, 3, 4, 3, 3, 4));
  pad.attributes["mode"] = "reflect";
  lowered = LowerTensorOp(g, pad, kLowerPad);
  ASSERT_TRUE(lowered.ok());
  EXPECT_THAT(RunStep(lowered->step, {x}, 9), ElementsAre(2, 1, 2, 4, 3, 4, 2, 1, 2));
  pad.attributes["mode"] = "wrap";
  lowered = LowerTensorOp(g, pad, kLowerPad);
  ASSERT_FALSE(lowered.ok());
  EXPECT_THAT(lowered.status().message(), HasSubstr("node 'pad' (Pad): mode 'wrap'"));
}

}  // namespace
}  // namespace tunefleet

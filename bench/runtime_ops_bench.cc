// The compiled-model runtime's operators outside the tuned kernels, timed
// alone in one thread on the shapes the zoo runs them at (kernel epilogues
// in channel blocks of 6 to 32, the exp activations and GELU, squeeze-
// excite multiplies, layout changes, ShuffleNet's split and shuffle,
// Inception's pooling, attention's softmax, transformers' layer norm), each
// beside memcpy of the same bytes in the same run: an operator that streams
// its data costs about what memcpy costs (a ratio near 1); far above 1 it
// is compute-bound (the exp activations) or has a slow inner loop.
//
//   bazel run -c opt //bench:runtime_ops_bench
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/kernel_abi.h"
#include "compiler/runtime/ops.h"
#include "compiler/runtime/plan.h"

namespace tunefleet {
namespace {

void Serial(void*, int64_t n, TfParallelBody body, void* closure) {
  for (int64_t i = 0; i < n; ++i) body(i, closure);
}

// The fastest of 15 repetitions of `fn`, in seconds.
double Best(const std::function<void()>& fn) {
  double best = 1e30;
  for (int r = 0; r < 15; ++r) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

struct Shape {
  int64_t channels, height, width, block;
};

void Report(const std::string& name, int64_t floats, double seconds, double memcpy_seconds) {
  absl::PrintF("%-44s %9.3f ms %6.3f ns/float   memcpy %7.3f ms   x%5.2f\n", name, seconds * 1e3,
               seconds * 1e9 / floats, memcpy_seconds * 1e3, seconds / memcpy_seconds);
}

int Main() {
  TfRuntime rt{};
  rt.abi_version = TF_KERNEL_ABI_VERSION;
  rt.num_threads = 1;
  rt.parallel_for = &Serial;
  // MobileNet-v3's and EfficientNet's expansions, a ResNet stage, odd blocks.
  const std::vector<Shape> shapes = {{64, 112, 112, 8}, {96, 112, 112, 8}, {120, 28, 28, 6},
                                     {240, 28, 28, 10}, {128, 28, 28, 16}, {232, 14, 14, 29},
                                     {672, 14, 14, 32}};
  absl::PrintF(
      "one thread; each figure the fastest of 15; memcpy: the bytes it reads and writes\n");
  for (const Shape& s : shapes) {
    const int64_t n = s.channels * s.height * s.width;
    std::vector<float> y(n), saved(n), residual(n), bias(s.channels), scale(s.channels), dst(2 * n);
    for (int64_t i = 0; i < n; ++i) saved[i] = static_cast<float>((i * 7919) % 2001 - 1000) / 400;
    for (int64_t c = 0; c < s.channels; ++c) bias[c] = scale[c] = 0.01f * static_cast<float>(c);
    // y is read and written once (2n floats): memcpy of n floats reads n and writes n.
    const double copy = Best([&] { std::memcpy(dst.data(), saved.data(), n * sizeof(float)); });
    const double copy2 =
        Best([&] { std::memcpy(dst.data(), saved.data(), 2 * n * sizeof(float)); });
    const std::string tag =
        absl::StrFormat("[%d,%d,%d] NCHW%dc", s.channels, s.height, s.width, s.block);
    struct Case {
      std::string name;
      bool bias, residual;
      PointwiseFunc func;
    };
    for (const Case& c : {Case{"bias+relu", true, false, PointwiseFunc::kRelu},
                          Case{"bias+residual+relu", true, true, PointwiseFunc::kRelu},
                          Case{"bias+hardswish", true, false, PointwiseFunc::kHardSwish},
                          Case{"bias+silu", true, false, PointwiseFunc::kSilu}}) {
      PlanEpilogue e;
      e.bias = c.bias ? 0 : -1;
      e.residual = c.residual ? 0 : -1;
      e.activation.func = c.func;
      if (c.func == PointwiseFunc::kHardSwish) e.activation = {c.func, 1.0f / 6, 0.5f};
      e.channels = s.channels;
      e.block = s.block;
      e.inner = s.height * s.width;
      const double t = Best([&] {
        ApplyEpilogue(e, c.bias ? bias.data() : nullptr, c.residual ? residual.data() : nullptr,
                      y.data(), n, &rt);
      });
      Report(absl::StrCat("epilogue ", c.name, " ", tag), n, t, c.residual ? copy2 : copy);
    }
    PlanStep mul;
    mul.op = StepOp::kChannelBinary;
    mul.binary = BinaryFunc::kMul;
    mul.in_shape = {1, s.channels};
    PlanBuffer layout;
    layout.shape = {1, s.channels, s.height, s.width};
    layout.elements = n;
    layout.block = s.block;
    const double t =
        Best([&] { ChannelBinary(mul, layout, saved.data(), scale.data(), y.data(), &rt); });
    Report(absl::StrCat("channel mul ", tag), n, t, copy);
  }
  // Layout changes between channel blocks (MobileNet-v3's, RegNet's).
  for (auto [channels, size, from, to] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t>{672, 14, 16, 8},
        {672, 14, 8, 16},
        {96, 56, 8, 16},
        {120, 28, 24, 8},
        {1152, 1, 16, 1}}) {
    const int64_t n = channels * size * size;
    std::vector<float> in(n), out(n), dst(n);
    for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>(i % 1001);
    PlanBuffer src{"x", n, -1, {1, channels, size, size}, from, 0};
    PlanBuffer dst_layout{"y", n, -1, {1, channels, size, size}, to, 0};
    const double copy = Best([&] { std::memcpy(dst.data(), in.data(), n * sizeof(float)); });
    const double t = Best([&] { Relayout(src, in.data(), dst_layout, out.data(), &rt); });
    Report(
        absl::StrFormat("relayout [%d,%d,%d] NCHW%dc -> NCHW%dc", channels, size, size, from, to),
        n, t, copy);
  }
  // ShuffleNet-v2's channel split (the second half, whole blocks) and its
  // shuffle of two groups, in blocks of 29 channels.
  {
    const int64_t channels = 116, size = 28, n = channels * size * size;
    std::vector<float> in(n), out(n), dst(n);
    for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>(i % 1001);
    const PlanBuffer layout{"x", n, -1, {1, channels, size, size}, 29, 0};
    const double copy = Best([&] { std::memcpy(dst.data(), in.data(), n * sizeof(float)); });
    PlanStep split;
    split.op = StepOp::kChannelGather;
    for (int64_t ch = channels / 2; ch < channels; ++ch) split.indices.push_back(ch);
    const PlanBuffer half{"y", n / 2, -1, {1, channels / 2, size, size}, 29, 0};
    const double t_split =
        Best([&] { ChannelGather(split, layout, in.data(), half, out.data(), &rt); });
    Report("channel split [116,28,28] NCHW29c, 2nd half", n / 2, t_split, copy / 2);
    PlanStep shuffle;
    shuffle.op = StepOp::kChannelGather;
    for (int64_t ch = 0; ch < channels; ++ch) {
      shuffle.indices.push_back((ch % 2) * (channels / 2) + ch / 2);
    }
    const double t_shuffle =
        Best([&] { ChannelGather(shuffle, layout, in.data(), layout, out.data(), &rt); });
    Report("channel shuffle [116,28,28] NCHW29c, 2 groups", n, t_shuffle, copy);
  }
  // Transformer MLPs' dense epilogues: bias and GELU (erf and tanh forms)
  // over [tokens, features] (Swin's first stage, BERT-tiny's FFN).
  for (auto [tokens, features] : {std::pair<int64_t, int64_t>{784, 768}, {128, 1024}}) {
    const int64_t n = tokens * features;
    std::vector<float> y(n), saved(n), bias(features), dst(n);
    for (int64_t i = 0; i < n; ++i) saved[i] = static_cast<float>((i * 7919) % 2001 - 1000) / 400;
    for (int64_t c = 0; c < features; ++c) bias[c] = 0.01f * static_cast<float>(c);
    const double copy = Best([&] { std::memcpy(dst.data(), saved.data(), n * sizeof(float)); });
    for (PointwiseFunc func : {PointwiseFunc::kGelu, PointwiseFunc::kGeluTanh}) {
      PlanEpilogue e;
      e.bias = 0;
      e.activation.func = func;
      e.channels = features;
      const double t = Best([&] { ApplyEpilogue(e, bias.data(), nullptr, y.data(), n, &rt); });
      Report(absl::StrFormat("epilogue bias+%s [%d,%d] dense", PointwiseFuncName(func), tokens,
                             features),
             n, t, copy);
    }
  }
  // Inception's pooling in NCHW16c: its branches' 3x3 average pools of
  // stride 1 (padding counted) and its 3x3 max pools of stride 2; and
  // GoogLeNet's branch max pools (3x3/1, padded) in NCHW, where a plan
  // runs them when their producers' blocks cannot meet. memcpy: the input's
  // bytes and the output's.
  for (auto [channels, size, stride, block] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t>{288, 35, 1, 16},
        {768, 17, 1, 16},
        {64, 147, 2, 16},
        {288, 35, 2, 16},
        {512, 14, 1, 1},
        {192, 28, 1, 1}}) {
    const int64_t n = channels * size * size, out_size = (size - 1) / stride + 1;
    const int64_t out_n = channels * out_size * out_size;
    std::vector<float> in(n), out(out_n), dst(n + out_n);
    for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>((i * 7919) % 2001 - 1000) / 400;
    PlanStep pool;
    pool.op = stride == 1 && block > 1 ? StepOp::kAvgPool : StepOp::kMaxPool;
    pool.kernel_shape = {3, 3};
    pool.strides = {stride, stride};
    pool.pads = stride == 1 ? std::vector<int64_t>{1, 1, 1, 1} : std::vector<int64_t>{0, 0, 0, 0};
    pool.count_include_pad = true;
    pool.in_shape = {1, channels, size, size};
    pool.out_shape = {1, channels, out_size, out_size};
    const PlanBuffer from{"x", n, -1, {1, channels, size, size}, block, 0};
    const PlanBuffer to{"y", out_n, -1, {1, channels, out_size, out_size}, block, 0};
    const double copy =
        Best([&] { std::memcpy(dst.data(), in.data(), (n + out_n) / 2 * sizeof(float)); });
    const double t = Best([&] { Pool(pool, from, in.data(), to, out.data(), &rt); });
    Report(absl::StrFormat("%s 3x3/%d [%d,%d,%d] %s", StepOpName(pool.op), stride, channels, size,
                           size, block > 1 ? absl::StrCat("NCHW", block, "c") : "NCHW"),
           out_n, t, copy);
  }
  // Attention's softmax over rows of 49 (Swin's windows) and 128 (BERT).
  for (auto [rows, width] : {std::pair<int64_t, int64_t>{64 * 3 * 49, 49}, {4 * 128, 128}}) {
    const int64_t n = rows * width;
    std::vector<float> in(n), out(n), dst(n);
    for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>((i * 7919) % 2001 - 1000) / 100;
    PlanStep softmax;
    softmax.op = StepOp::kSoftmax;
    softmax.in_shape = {rows, width, 1};
    const double copy = Best([&] { std::memcpy(dst.data(), in.data(), n * sizeof(float)); });
    const double t = Best([&] { Softmax(softmax, in.data(), nullptr, out.data(), &rt); });
    Report(absl::StrFormat("softmax rows of %d [%d]", width, rows), n, t, copy);
  }
  // A transformer's layer norm over rows of 96 (Swin-T's first stage),
  // 128 (BERT-tiny) and 768 (ViT-B), with its scale and bias.
  for (auto [rows, width] : {std::pair<int64_t, int64_t>{56 * 56, 96}, {128, 128}, {197, 768}}) {
    const int64_t n = rows * width;
    std::vector<float> in(n), out(n), dst(n), scale(width, 1.5f), bias(width, 0.25f);
    for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>((i * 7919) % 2001 - 1000) / 100;
    PlanStep norm;
    norm.op = StepOp::kLayerNorm;
    norm.in_shape = {rows, width};
    norm.alpha = 1e-5f;
    const double copy = Best([&] { std::memcpy(dst.data(), in.data(), n * sizeof(float)); });
    const double t = Best(
        [&] { RunTensorOp(norm, {in.data(), scale.data(), bias.data()}, out.data(), n, &rt, {}); });
    Report(absl::StrFormat("layer_norm rows of %d [%d]", width, rows), n, t, copy);
  }
  return 0;
}

}  // namespace
}  // namespace tunefleet

int main() { return tunefleet::Main(); }

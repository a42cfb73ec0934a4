// Kernels whose final stores compute a compiled model's epilogue
// (passes/fuse_epilogue.h): y = act(y + bias[channel] + residual) on every
// output element, what the pass after an unfused kernel computes (every
// activation, the exp ones against libm's within 1e-5).
// Random configs of every template that marks its final stores, each built
// with and without the epilogue and run on the same inputs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/kernel_abi.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "toolchain/builder.h"
#include "toolchain/kernel_test_util.h"
#include "toolchain/passes/fuse_epilogue.h"
#include "tuner_core/workloads/workload_test_util.h"

namespace tunefleet {
namespace {

// Runs the kernel (prepare, then its entry) on `buffers`, with `epilogue`
// (bias, residual) after the hook's NULL when it has one; its output.
::testing::AssertionResult Run(const BuildResult& built, const ir::LoweredFunc& func,
                               const kernel_test::EpilogueOutput& output,
                               workload_test::ReferenceBuffers buffers,
                               const std::vector<float*>& epilogue, std::vector<float>* out) {
  std::vector<float*> pointers = buffers.KernelPointers();
  std::vector<void*> args(pointers.begin(), pointers.end());
  std::vector<std::vector<float>> staged;
  for (const ir::StagedBuffer& b : func.staged) staged.emplace_back(b.num_elements, 0.0f);
  for (auto& b : staged) args.push_back(b.data());
  args.push_back(nullptr);  // the hook's
  for (float* p : epilogue) args.push_back(p);
  ::testing::AssertionResult ran = kernel_test::RunPrepareThenEntry(
      built.artifact.shared_object, built.artifact.entry_name, args);
  if (!ran) return ran;
  *out =
      output.staged_index >= 0 ? staged[output.staged_index] : buffers.kernel[output.tensor_index];
  return ::testing::AssertionSuccess();
}

// The epilogue's activation as the pass computes it (compiler/runtime).
float Activate(const StoreEpilogue& e, float y) {
  switch (e.activation) {
    case StoreActivation::kNone:
      return y;
    case StoreActivation::kRelu:
      return std::max(y, 0.0f);
    case StoreActivation::kClip:
      return std::min(std::max(y, e.alpha), e.beta);
    case StoreActivation::kLeakyRelu:
      return y < 0 ? e.alpha * y : y;
    case StoreActivation::kHardSigmoid:
      return std::max(0.0f, std::min(1.0f, e.alpha * y + e.beta));
    case StoreActivation::kHardSwish:
      return y * std::max(0.0f, std::min(1.0f, e.alpha * y + e.beta));
    case StoreActivation::kExp:
      return std::exp(y);
    case StoreActivation::kSigmoid:
      return 1.0f / (1.0f + std::exp(-y));
    case StoreActivation::kSilu:
      return y / (1.0f + std::exp(-y));
    case StoreActivation::kTanh:
      return std::tanh(y);
    case StoreActivation::kGelu:
      return 0.5f * y * (1.0f + std::erf(y / std::sqrt(2.0f)));
    case StoreActivation::kGeluTanh:
      return 0.5f * y * (1.0f + std::tanh(0.7978845608f * (y + 0.044715f * y * y * y)));
    case StoreActivation::kElu:
      return y < 0 ? e.alpha * (std::exp(y) - 1.0f) : y;
  }
  return y;
}

// Builds `config` plain and with `epilogue` in its stores, runs both on the
// same inputs and checks the second against the first with the epilogue
// applied; `channel_of(config, element)` is the output channel of an
// element of the epilogue's buffer.
using ChannelOf = std::function<int64_t(const Config&, int64_t)>;
::testing::AssertionResult StoresComputeEpilogue(const Template& tmpl, const Workload& workload,
                                                 const Config& config, StoreEpilogue epilogue,
                                                 int64_t channels, const ChannelOf& channel_of,
                                                 uint64_t seed, bool* fused) {
  *fused = false;
  absl::StatusOr<ir::LoweredFunc> func = tmpl.Instantiate(workload, config);
  if (!func.ok()) return ::testing::AssertionSuccess();  // refused configs are builder_test's
  const kernel_test::EpilogueOutput output = kernel_test::EpilogueOutputOf(*func);
  epilogue.buffer = output.name;
  auto target = ParseTarget("llvm -mcpu=native");
  if (!target.ok()) return ::testing::AssertionFailure() << target.status();
  BuildResult plain = BuildCandidate(tmpl, workload, config, *target);
  if (plain.error_no == MeasureErrorNo::kInstantiationError) return ::testing::AssertionSuccess();
  if (!plain.ok()) return ::testing::AssertionFailure() << plain.error_msg;
  BuildOptions options;
  options.store_epilogue = [&](const ir::LoweredFunc&) { return epilogue; };
  BuildResult with = BuildCandidate(tmpl, workload, config, *target, options);
  if (!with.ok()) return ::testing::AssertionFailure() << with.error_msg;
  // Whether it fused (the builder's own call on the same kernel): then the
  // entry reads the epilogue's pointers.
  ir::LoweredFunc fusing = *func;
  *fused = FuseEpilogueIntoStores(&fusing, &epilogue);
  if (!*fused)
    return ::testing::AssertionFailure()
           << "the stores of " << output.name << " did not take the epilogue";

  std::mt19937_64 rng(seed);
  const workload_test::ReferenceBuffers buffers =
      workload_test::MakeReferenceBuffers(workload, &rng);
  std::vector<float> want;
  ::testing::AssertionResult ran = Run(plain, *func, output, buffers, {}, &want);
  if (!ran) return ran;
  std::mt19937 values(static_cast<uint32_t>(seed));
  std::vector<float> bias = workload_test::Random(channels, &values);
  std::vector<float> residual = workload_test::Random(static_cast<int64_t>(want.size()), &values);
  std::vector<float*> pointers;
  if (epilogue.bias) pointers.push_back(bias.data());
  if (epilogue.residual) pointers.push_back(residual.data());
  std::vector<float> got;
  ran = Run(with, *func, output, buffers, pointers, &got);
  if (!ran) return ran;
  for (size_t e = 0; e < want.size(); ++e) {
    float y = want[e];
    if (epilogue.bias) y += bias[channel_of(config, static_cast<int64_t>(e))];
    if (epilogue.residual) y += residual[e];
    y = Activate(epilogue, y);
    if (std::fabs(got[e] - y) > 1e-5f * (1.0f + std::fabs(y))) {
      return ::testing::AssertionFailure()
             << output.name << "[" << e << "] is " << got[e] << ", want " << y;
    }
  }
  return ::testing::AssertionSuccess();
}

// The epilogues the tests cycle through: every activation, with and
// without bias and residual.
StoreEpilogue EpilogueNumber(int64_t i) {
  StoreEpilogue e;
  e.bias = i % 2 == 0;
  e.residual = i % 3 != 1;
  e.activation = static_cast<StoreActivation>(i % kNumStoreActivations);
  switch (e.activation) {
    case StoreActivation::kClip:
      e.alpha = -0.3f, e.beta = 0.5f;
      break;
    case StoreActivation::kLeakyRelu:
      e.alpha = 0.1f;
      break;
    case StoreActivation::kElu:
      e.alpha = 0.7f;
      break;
    case StoreActivation::kHardSigmoid:
    case StoreActivation::kHardSwish:
      e.alpha = 1.0f / 6, e.beta = 0.5f;
      break;
    default:
      break;
  }
  return e;
}

void CheckRandomConfigs(const std::string& template_name,
                        const std::vector<nlohmann::json>& workloads, int configs, uint64_t seed,
                        const std::function<int64_t(const Workload&)>& channels,
                        const ChannelOf& channel_of) {
  int fused = 0;
  kernel_test::ForRandomConfigs(
      template_name, workloads, configs, seed,
      [&](const Template& tmpl, const Workload& workload, const Config& config, int64_t index) {
        bool this_fused = false;
        EXPECT_TRUE(StoresComputeEpilogue(tmpl, workload, config, EpilogueNumber(index),
                                          channels(workload), channel_of, index, &this_fused))
            << workload.Describe() << " config " << config.ToString();
        fused += this_fused ? 1 : 0;
      });
  EXPECT_GT(fused, 0);
  std::printf("%s: %d kernels with the epilogue in their stores checked\n", template_name.c_str(),
              fused);
}

int64_t Arg(const Workload& w, const char* name) { return w.args().at(name).get<int64_t>(); }
int64_t Knob(const Config& c, const char* name) { return c.GetInt(name).value(); }

// The output channel of element e of a blocked [N][K/block][H'][W'][block]
// output with `positions` = H' * W'.
int64_t BlockedChannel(int64_t e, int64_t channels, int64_t block, int64_t positions) {
  return ((e / (positions * block)) % (channels / block)) * block + e % block;
}

// Output positions of a convolution (H' * W'), from its output's size.
int64_t ConvPositions(const Workload& w, int64_t channels) {
  for (const TensorArg& t : w.tensors()) {
    if (t.is_output) return t.NumElements() / (Arg(w, "N") * channels);
  }
  return 0;
}

// A blocked template's random configs: its channels are the workload's
// `channels` argument, blocked by its `block_knob`.
void CheckBlockedConvolutions(const std::string& template_name, bool with_k, const char* channels,
                              const char* block_knob, int configs, uint64_t seed) {
  const Workload* current = nullptr;
  CheckRandomConfigs(
      template_name, kernel_test::BlockedConvShapes(with_k), configs, seed,
      [&](const Workload& w) {
        current = &w;
        return Arg(w, channels);
      },
      [&](const Config& c, int64_t e) {
        const int64_t k = Arg(*current, channels);
        return BlockedChannel(e, k, Knob(c, block_knob), ConvPositions(*current, k));
      });
}

TEST(EpilogueStoresTest, BlockedConvolutionsComputeTheEpilogueInTheirStores) {
  CheckBlockedConvolutions("conv2d_nchwc.x86", true, "K", "tile_oc", 16, 11);
}

TEST(EpilogueStoresTest, DepthwiseConvolutionsComputeTheEpilogueInTheirStores) {
  CheckBlockedConvolutions("depthwise_conv2d_nchwc.x86", false, "C", "tile_c", 10, 12);
}

TEST(EpilogueStoresTest, DenseKernelsComputeTheEpilogueInTheirStores) {
  // Ragged M and N, several K blocks, M = 1 (the dot kernel's tasks).
  const std::vector<nlohmann::json> shapes = {{{"M", 37}, {"N", 53}, {"K", 300}, {"layout", "NK"}},
                                              {{"M", 19}, {"N", 41}, {"K", 67}, {"layout", "KN"}},
                                              {{"M", 1}, {"N", 70}, {"K", 33}, {"layout", "NK"}}};
  const Workload* current = nullptr;
  auto channels = [&](const Workload& w) {
    current = &w;
    return Arg(w, "N");
  };
  auto column = [&](const Config&, int64_t e) { return e % Arg(*current, "N"); };
  CheckRandomConfigs("dense_gemm.x86", shapes, 16, 13, channels, column);
  CheckRandomConfigs("dense_pack.x86", shapes, 8, 14, channels, column);
  CheckRandomConfigs("batch_matmul_pack.x86",
                     {{{"B", 3}, {"M", 17}, {"N", 29}, {"K", 13}, {"layout", "NK"}},
                      {{"B", 2}, {"M", 33}, {"N", 18}, {"K", 600}, {"layout", "KN"}}},
                     8, 15, channels, column);
}

}  // namespace
}  // namespace tunefleet

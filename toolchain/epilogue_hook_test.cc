// Kernels built with an epilogue hook (common/kernel_abi.h) call it on
// regions of their output that cover it exactly once, each after the
// region's last write: what a compiled model's fused epilogue relies on.
// Random configs of every template whose regions a model's epilogue uses.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/kernel_abi.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "toolchain/builder.h"
#include "toolchain/kernel_test_util.h"
#include "tuner_core/workloads/workload_test_util.h"

namespace tunefleet {
namespace {

// A hook that records, per element of the hooked buffer, how often a region
// held it and its value then.
struct Recorder {
  TfEpilogue hook;  // first: the kernel's pointer is the Recorder's
  const float* buffer = nullptr;
  int64_t elements = 0;
  std::vector<int> calls;
  std::vector<float> value_then;
  int64_t outside = 0;  // elements of regions past the buffer
};
void Record(const TfEpilogue* self, int64_t offset, int64_t rows, int64_t cols, int64_t stride) {
  auto* r = const_cast<Recorder*>(reinterpret_cast<const Recorder*>(self));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t e = offset + i * stride + j;
      if (e < 0 || e >= r->elements) {
        ++r->outside;
        continue;
      }
      ++r->calls[e];
      r->value_then[e] = r->buffer[e];
    }
  }
}

// Builds `config` with the hook on the buffer its template marks (the
// output tensor, or a blocked convolution's staged output), runs prepare
// and the entry once, and checks the regions the entry reported.
::testing::AssertionResult HookCoversOutputOnce(const Template& tmpl, const Workload& workload,
                                                const Config& config, uint64_t seed, bool* built) {
  *built = false;
  absl::StatusOr<ir::LoweredFunc> func = tmpl.Instantiate(workload, config);
  if (!func.ok()) return ::testing::AssertionSuccess();  // refused configs are builder_test's
  const kernel_test::EpilogueOutput output = kernel_test::EpilogueOutputOf(*func);
  const std::string& hooked = output.name;
  BuildOptions options;
  options.epilogue_hook = [&](const ir::LoweredFunc&) { return hooked; };
  auto target = ParseTarget("llvm -mcpu=native");
  if (!target.ok()) return ::testing::AssertionFailure() << target.status();
  BuildResult result = BuildCandidate(tmpl, workload, config, *target, options);
  if (result.error_no == MeasureErrorNo::kInstantiationError) return ::testing::AssertionSuccess();
  if (!result.ok()) return ::testing::AssertionFailure() << result.error_msg;
  *built = true;

  std::mt19937_64 rng(seed);
  workload_test::ReferenceBuffers buffers = workload_test::MakeReferenceBuffers(workload, &rng);
  std::vector<float*> pointers = buffers.KernelPointers();
  std::vector<void*> args(pointers.begin(), pointers.end());
  std::vector<std::vector<float>> staged;
  for (const ir::StagedBuffer& b : func->staged) staged.emplace_back(b.num_elements, 0.0f);
  for (auto& b : staged) args.push_back(b.data());
  Recorder recorder;
  recorder.hook.apply = &Record;
  if (output.staged_index >= 0) {
    recorder.buffer = staged[output.staged_index].data();
    recorder.elements = static_cast<int64_t>(staged[output.staged_index].size());
  } else {
    recorder.buffer = pointers[output.tensor_index];
    recorder.elements = static_cast<int64_t>(buffers.kernel[output.tensor_index].size());
  }
  recorder.calls.assign(recorder.elements, 0);
  recorder.value_then.assign(recorder.elements, 0.0f);
  args.push_back(&recorder.hook);
  ::testing::AssertionResult ran = kernel_test::RunPrepareThenEntry(
      result.artifact.shared_object, result.artifact.entry_name, args);
  if (!ran) return ran;
  if (recorder.outside > 0) {
    return ::testing::AssertionFailure() << recorder.outside << " region elements past " << hooked;
  }
  for (int64_t e = 0; e < recorder.elements; ++e) {
    if (recorder.calls[e] != 1) {
      return ::testing::AssertionFailure()
             << hooked << "[" << e << "] was in " << recorder.calls[e] << " ready regions";
    }
    if (!(recorder.value_then[e] == recorder.buffer[e])) {
      return ::testing::AssertionFailure()
             << hooked << "[" << e << "] was " << recorder.value_then[e] << " when ready, then "
             << recorder.buffer[e];
    }
  }
  return ::testing::AssertionSuccess();
}

void CheckRandomConfigs(const std::string& template_name,
                        const std::vector<nlohmann::json>& workloads, int configs, uint64_t seed) {
  int built = 0;
  kernel_test::ForRandomConfigs(
      template_name, workloads, configs, seed,
      [&](const Template& tmpl, const Workload& workload, const Config& config, int64_t index) {
        bool this_built = false;
        EXPECT_TRUE(HookCoversOutputOnce(tmpl, workload, config, index, &this_built))
            << workload.Describe() << " config " << config.ToString();
        built += this_built ? 1 : 0;
      });
  EXPECT_GT(built, 0);
  std::printf("%s: %d hooked kernels checked\n", template_name.c_str(), built);
}

TEST(EpilogueHookTest, BlockedConvolutionsReportEveryOutputOnceWhenFinal) {
  CheckRandomConfigs("conv2d_nchwc.x86", kernel_test::BlockedConvShapes(true), 12, 1);
}

TEST(EpilogueHookTest, DepthwiseConvolutionsReportEveryOutputOnceWhenFinal) {
  CheckRandomConfigs("depthwise_conv2d_nchwc.x86", kernel_test::BlockedConvShapes(false), 12, 2);
}

TEST(EpilogueHookTest, DenseKernelsReportEveryOutputOnceWhenFinal) {
  // Ragged M and N, several K blocks, M = 1 (the dot kernel's tasks).
  const std::vector<nlohmann::json> shapes = {{{"M", 37}, {"N", 53}, {"K", 300}, {"layout", "NK"}},
                                              {{"M", 19}, {"N", 41}, {"K", 67}, {"layout", "KN"}},
                                              {{"M", 1}, {"N", 70}, {"K", 33}, {"layout", "NK"}},
                                              {{"M", 64}, {"N", 48}, {"K", 64}, {"layout", "KN"}}};
  CheckRandomConfigs("dense_gemm.x86", shapes, 20, 3);
  CheckRandomConfigs("dense_pack.x86", shapes, 10, 4);
}

TEST(EpilogueHookTest, BatchedMatmulsReportEveryOutputOnceWhenFinal) {
  CheckRandomConfigs("batch_matmul_pack.x86",
                     {{{"B", 3}, {"M", 17}, {"N", 29}, {"K", 13}, {"layout", "NK"}},
                      {{"B", 2}, {"M", 33}, {"N", 18}, {"K", 600}, {"layout", "KN"}}},
                     12, 5);
}

}  // namespace
}  // namespace tunefleet

// Kernels built with an epilogue hook (common/kernel_abi.h) call it on
// regions of their output that cover it exactly once, each after the
// region's last write: what a compiled model's fused epilogue relies on.
// Random configs of every template whose regions a model's epilogue uses.
#include <dlfcn.h>
#include <unistd.h>

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
  // The hooked buffer: a staged one named like an output, else the output.
  std::string hooked;
  int staged_index = -1;
  for (size_t i = 0; i < func->staged.size(); ++i) {
    if (func->staged[i].name.rfind("out", 0) == 0) {
      hooked = func->staged[i].name;
      staged_index = static_cast<int>(i);
    }
  }
  int tensor_index = -1;
  for (size_t i = 0; i < func->args.size() && hooked.empty(); ++i) {
    if (func->args[i].is_output) {
      hooked = func->args[i].name;
      tensor_index = static_cast<int>(i);
    }
  }
  BuildOptions options;
  options.epilogue_hook = [&](const ir::LoweredFunc&) { return hooked; };
  auto target = ParseTarget("llvm -mcpu=native");
  if (!target.ok()) return ::testing::AssertionFailure() << target.status();
  BuildResult result = BuildCandidate(tmpl, workload, config, *target, options);
  if (result.error_no == MeasureErrorNo::kInstantiationError) return ::testing::AssertionSuccess();
  if (!result.ok()) return ::testing::AssertionFailure() << result.error_msg;
  *built = true;

  std::string load_error;
  void* handle = kernel_test::LoadSharedObject(result.artifact.shared_object, &load_error);
  if (handle == nullptr) return ::testing::AssertionFailure() << "cannot load: " << load_error;
  const std::string& entry_name = result.artifact.entry_name;
  auto entry = reinterpret_cast<TfKernelEntry>(dlsym(handle, entry_name.c_str()));
  auto prepare = reinterpret_cast<TfKernelEntry>(
      dlsym(handle, (entry_name + TF_KERNEL_PREPARE_SUFFIX).c_str()));

  std::mt19937_64 rng(seed);
  workload_test::ReferenceBuffers buffers = workload_test::MakeReferenceBuffers(workload, &rng);
  std::vector<float*> pointers = buffers.KernelPointers();
  std::vector<void*> args(pointers.begin(), pointers.end());
  std::vector<std::vector<float>> staged;
  for (const ir::StagedBuffer& b : func->staged) staged.emplace_back(b.num_elements, 0.0f);
  for (auto& b : staged) args.push_back(b.data());
  Recorder recorder;
  recorder.hook.apply = &Record;
  if (staged_index >= 0) {
    recorder.buffer = staged[staged_index].data();
    recorder.elements = static_cast<int64_t>(staged[staged_index].size());
  } else {
    recorder.buffer = pointers[tensor_index];
    recorder.elements = static_cast<int64_t>(buffers.kernel[tensor_index].size());
  }
  recorder.calls.assign(recorder.elements, 0);
  recorder.value_then.assign(recorder.elements, 0.0f);
  args.push_back(&recorder.hook);
  int32_t rc = prepare != nullptr ? prepare(args.data(), &kernel_test::kSerialRuntime) : 0;
  if (rc == 0) rc = entry(args.data(), &kernel_test::kSerialRuntime);
  dlclose(handle);
  if (rc != 0) return ::testing::AssertionFailure() << "kernel returned " << rc;
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

// Blocked (NCHWc) convolutions: the regions are rows, tiles of rows cut into
// parts, and bands of rows finished after the last input-channel block.
std::vector<nlohmann::json> BlockedConvShapes(bool with_k) {
  std::vector<nlohmann::json> shapes = {
      {{"N", 1}, {"C", 16}, {"H", 13}, {"W", 11}, {"K", 32}, {"R", 3}, {"S", 3}, {"padding", 1}},
      {{"N", 2},
       {"C", 8},
       {"H", 15},
       {"W", 17},
       {"K", 24},
       {"R", 3},
       {"S", 3},
       {"stride", 2},
       {"padding", {1, 0, 2, 1}}},
      {{"N", 1}, {"C", 48}, {"H", 7}, {"W", 7}, {"K", 40}, {"R", 1}, {"S", 1}},
      {{"N", 1}, {"C", 64}, {"H", 2}, {"W", 3}, {"K", 16}, {"R", 1}, {"S", 1}},
  };
  for (nlohmann::json& shape : shapes) {
    shape["layout"] = "NCHWc";
    if (!with_k) {
      shape["C"] = shape["K"];
      shape.erase("K");
    }
  }
  return shapes;
}

TEST(EpilogueHookTest, BlockedConvolutionsReportEveryOutputOnceWhenFinal) {
  CheckRandomConfigs("conv2d_nchwc.x86", BlockedConvShapes(true), 12, 1);
}

TEST(EpilogueHookTest, DepthwiseConvolutionsReportEveryOutputOnceWhenFinal) {
  CheckRandomConfigs("depthwise_conv2d_nchwc.x86", BlockedConvShapes(false), 12, 2);
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

// GpuKernelRunner against the fake driver (fake_cuda_driver.h): every path of
// the GPU measurement runs here on machines without a GPU. The same flows on
// a real GPU are in gpu_runner_test.cc.
#include "kernel_runtime/gpu_kernel_runner.h"

#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/gpu_artifact.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_runtime/fake_cuda_driver.h"
#include "kernel_runtime/tensor_data.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {
namespace {

using ::testing::DoubleNear;
using ::testing::Each;
using ::testing::HasSubstr;
using ::tunefleet::testing::FakeCuda;
using ::tunefleet::testing::FakeDenseKernel;
using ::tunefleet::testing::FakeFaultingKernel;
using ::tunefleet::testing::FakeKernel;
using ::tunefleet::testing::FakePtx;

constexpr char kEntry[] = "dense_kernel";
constexpr char kArgs[] = R"({"M": 48, "N": 40, "K": 64, "layout": "NK"})";

int Code(MeasureErrorNo error_no) { return static_cast<int>(error_no); }

std::string Artifact(const std::string& ptx, std::array<int64_t, 3> block = {256, 1, 1}) {
  GpuLaunch launch;
  launch.entry = kEntry;
  launch.grid = {8, 1, 1};
  launch.block = block;
  return FormatGpuArtifact(launch, ptx);
}

proto::RunRequest Request(const std::string& artifact) {
  proto::RunRequest request;
  request.set_workload_name("dense");
  request.set_workload_args_json(kArgs);
  request.set_shared_object(artifact);
  request.set_entry_name(kEntry);
  proto::MeasureOptions* options = request.mutable_options();
  options->set_number(2);
  options->set_repeat(3);
  options->set_min_repeat_ms(0);
  options->set_cooldown_interval_s(0);
  options->set_timeout_s(10);
  options->set_check_correctness(true);
  options->set_input_seed(1);
  return request;
}

class GpuKernelRunnerTest : public ::testing::Test {
 protected:
  GpuKernelRunnerTest() {
    GpuKernelRunnerOptions options;
    options.open_driver = [this] { return CudaDriver::FromApi(fake_.api(), "fake"); };
    runner_ = std::make_unique<GpuKernelRunner>(std::move(options), &host_clock_);
  }

  proto::RunResult Run(const proto::RunRequest& request) {
    PreparedWorkload* workload =
        *workloads_.Get(request.workload_name(), request.workload_args_json(), 1);
    return runner_->Run(request, *workload, proto::RunResult(),
                        [this](RunnerStage stage) { stages_.push_back(stage); });
  }

  FakeCuda fake_;
  FakeClock host_clock_;
  PreparedWorkloadCache workloads_;
  std::unique_ptr<GpuKernelRunner> runner_;
  std::vector<RunnerStage> stages_;
};

TEST_F(GpuKernelRunnerTest, CorrectKernelIsCheckedThenTimedOnTheGpuTimeline) {
  FakeKernel kernel = FakeDenseKernel(48, 40, 64);
  kernel.duration_ms = 0.25;
  fake_.AddKernel(kEntry, kernel);
  proto::RunResult result = Run(Request(Artifact(FakePtx(kEntry, 3))));
  ASSERT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  // Seconds per launch, from the events: exactly the kernel's GPU time.
  ASSERT_EQ(result.costs_size(), 1);  // 3 repeats, trimmed
  EXPECT_EQ(result.timed_repeats(), 3);
  EXPECT_THAT(result.costs(), Each(DoubleNear(0.25e-3, 1e-9)));
  // One check run, one warm-up, then number = 2 launches per repeat.
  EXPECT_EQ(fake_.launches(), 1 + 1 + 3 * 2);
  EXPECT_EQ(stages_, (std::vector<RunnerStage>{RunnerStage::kLoadingKernel, RunnerStage::kCheckRun,
                                               RunnerStage::kComparing, RunnerStage::kTimingRuns}));
  ASSERT_TRUE(runner_->device().has_value());
  EXPECT_EQ(runner_->device()->name, "Fake H100 0");
  EXPECT_FALSE(runner_->context_lost());
}

TEST_F(GpuKernelRunnerTest, MinRepeatMsGrowsTheLaunchesPerRepeat) {
  FakeKernel kernel = FakeDenseKernel(48, 40, 64);
  kernel.duration_ms = 0.25;
  fake_.AddKernel(kEntry, kernel);
  proto::RunRequest request = Request(Artifact(FakePtx(kEntry, 3)));
  request.mutable_options()->set_min_repeat_ms(10);
  proto::RunResult result = Run(request);
  ASSERT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  EXPECT_THAT(result.costs(), Each(DoubleNear(0.25e-3, 1e-9)));
  // Each repeat lasted >= 10 ms of GPU time, i.e. >= 40 launches.
  EXPECT_GE(fake_.launches(), 2 + 3 * 40);
}

TEST_F(GpuKernelRunnerTest, KernelSkippingAnElementIsWrongAnswer) {
  fake_.AddKernel(kEntry, FakeDenseKernel(48, 40, 64, /*skip_index=*/83));
  proto::RunResult result = Run(Request(Artifact(FakePtx(kEntry, 3))));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kWrongAnswer));
  EXPECT_THAT(result.error_msg(), HasSubstr("dense(K=64,M=48,N=40,layout=NK)"));
  EXPECT_THAT(result.error_msg(), HasSubstr("at index 83 [2, 3]: got nan"));
  EXPECT_THAT(result.error_msg(), HasSubstr("1 of 1920 elements mismatch (1 of them NaN)"));
  EXPECT_EQ(result.costs_size(), 0);
}

TEST_F(GpuKernelRunnerTest, KernelWritingAnInputIsWrongAnswer) {
  FakeKernel kernel = FakeDenseKernel(48, 40, 64);
  FakeKernel dense = kernel;
  kernel.body = [dense](const std::array<unsigned, 3>& grid, const std::array<unsigned, 3>& block,
                        void** params) {
    const CUresult result = dense.body(grid, block, params);
    reinterpret_cast<float*>(*static_cast<CUdeviceptr*>(params[1]))[5] = 42.0f;
    return result;
  };
  fake_.AddKernel(kEntry, kernel);
  proto::RunResult result = Run(Request(Artifact(FakePtx(kEntry, 3))));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kWrongAnswer));
  EXPECT_THAT(result.error_msg(), HasSubstr("kernel wrote into input B"));
}

TEST_F(GpuKernelRunnerTest, CheckingOffTimesAWrongKernel) {
  fake_.AddKernel(kEntry, FakeDenseKernel(48, 40, 64, /*skip_index=*/83));
  proto::RunRequest request = Request(Artifact(FakePtx(kEntry, 3)));
  request.mutable_options()->set_check_correctness(false);
  proto::RunResult result = Run(request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  EXPECT_EQ(result.costs_size(), 1);
}

TEST_F(GpuKernelRunnerTest, IllegalAddressIsRuntimeDeviceAndLosesTheContext) {
  fake_.AddKernel(kEntry, FakeFaultingKernel(kCudaErrorIllegalAddress));
  proto::RunResult result = Run(Request(Artifact(FakePtx(kEntry, 3))));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("on the correctness check run: cuCtxSynchronize "
                                            "failed: CUDA_ERROR_ILLEGAL_ADDRESS"));
  EXPECT_THAT(result.error_msg(), HasSubstr("the CUDA context is lost"));
  EXPECT_TRUE(runner_->context_lost());

  // Nothing runs on a lost context; the caller must start a new process.
  fake_.AddKernel(kEntry, FakeDenseKernel(48, 40, 64));
  result = Run(Request(Artifact(FakePtx(kEntry, 3))));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("the CUDA context was lost to an earlier fault"));
  EXPECT_EQ(runner_->OpenDevice().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(GpuKernelRunnerTest, FaultInTheTimingRunsIsRuntimeDevice) {
  fake_.AddKernel(kEntry, FakeFaultingKernel(kCudaErrorLaunchFailed));
  proto::RunRequest request = Request(Artifact(FakePtx(kEntry, 3)));
  request.mutable_options()->set_check_correctness(false);
  proto::RunResult result = Run(request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("during the timing runs"));
  EXPECT_THAT(result.error_msg(), HasSubstr("CUDA_ERROR_LAUNCH_FAILED"));
  EXPECT_EQ(result.costs_size(), 0);
  EXPECT_TRUE(runner_->context_lost());
  // The evaluator stopped at the first failed call instead of growing
  // `number` on a clock that no longer advances.
  EXPECT_LE(fake_.launches(), 2);
}

TEST_F(GpuKernelRunnerTest, PtxThatDoesNotCompileIsCompileDeviceWithTheJitLog) {
  proto::RunResult result = Run(Request(Artifact(FakePtx(kEntry, 3) + "SYNTAX ERROR")));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kCompileDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("the PTX does not load on Fake H100 0 (sm_90)"));
  EXPECT_THAT(result.error_msg(), HasSubstr("JIT log: ptxas application ptx input, line 3"));
  EXPECT_FALSE(runner_->context_lost());
}

TEST_F(GpuKernelRunnerTest, EntryTheModuleLacksIsCompileDevice) {
  fake_.AddKernel("other_kernel", FakeDenseKernel(48, 40, 64));
  GpuLaunch launch;
  launch.entry = "other_name";
  proto::RunResult result = Run(Request(FormatGpuArtifact(launch, FakePtx("other_kernel", 3))));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kCompileDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("no entry \"other_name\""));
}

TEST_F(GpuKernelRunnerTest, BlockTooLargeForTheCompiledKernelIsInstantiationError) {
  FakeKernel kernel = FakeDenseKernel(48, 40, 64);
  kernel.max_threads_per_block = 256;
  kernel.num_registers = 128;
  fake_.AddKernel(kEntry, kernel);
  proto::RunResult result = Run(Request(Artifact(FakePtx(kEntry, 3), {512, 1, 1})));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kInstantiationError));
  EXPECT_THAT(result.error_msg(),
              HasSubstr("block 512,1,1 has 512 threads; the compiled kernel allows 256 (it uses "
                        "128 registers per thread of the 65536 per block)"));
  EXPECT_EQ(fake_.launches(), 0);
}

TEST_F(GpuKernelRunnerTest, BlockBeyondTheDeviceLimitsIsInstantiationError) {
  fake_.AddKernel(kEntry, FakeDenseKernel(48, 40, 64));
  proto::RunResult result = Run(Request(Artifact(FakePtx(kEntry, 3), {1, 1, 128})));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kInstantiationError));
  EXPECT_THAT(result.error_msg(), HasSubstr("z = 128 exceeds the device's maximum of 64"));
  result = Run(Request(Artifact(FakePtx(kEntry, 3), {64, 32, 1})));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kInstantiationError));
  EXPECT_THAT(result.error_msg(), HasSubstr("has 2048 threads; the device allows 1024"));
}

TEST_F(GpuKernelRunnerTest, ParameterCountMustMatchTheTensors) {
  fake_.AddKernel(kEntry, FakeDenseKernel(48, 40, 64));
  proto::RunResult result = Run(Request(Artifact(FakePtx(kEntry, 2))));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("kernel dense_kernel declares 2 parameters but "
                                            "dense(K=64,M=48,N=40,layout=NK) has 3 tensors"));
}

TEST_F(GpuKernelRunnerTest, MalformedHeaderIsRuntimeDevice) {
  proto::RunResult result =
      Run(Request("// tunefleet-gpu-kernel entry=dense_kernel grid=8 block=256,1,1\n.entry x"));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("cannot load the kernel: GPU artifact header"));
}

TEST_F(GpuKernelRunnerTest, DeviceBuffersAreReusedAndEverythingIsReleased) {
  fake_.AddKernel(kEntry, FakeDenseKernel(48, 40, 64));
  for (int trial = 0; trial < 3; ++trial) {
    proto::RunResult result = Run(Request(Artifact(FakePtx(kEntry, 3))));
    ASSERT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
    EXPECT_EQ(fake_.live_allocations(), 3);
    EXPECT_EQ(fake_.live_modules(), 0);  // one module per trial, unloaded after it
  }
  EXPECT_EQ(fake_.retained_contexts(), 1);
  runner_.reset();
  EXPECT_EQ(fake_.live_allocations(), 0);
  EXPECT_EQ(fake_.retained_contexts(), 0);
}

// The warm-up a runner child runs before its sandbox goes through module
// load, allocation, copies, events and a launch, and keeps none of it.
TEST_F(GpuKernelRunnerTest, WarmUpLaunchesItsKernelOnceAndReleasesWhatItUsed) {
  fake_.AddKernel(kGpuWarmUpEntry, ::tunefleet::testing::FakeWarmUpKernel());
  absl::Status warmed = runner_->WarmUp();
  ASSERT_TRUE(warmed.ok()) << warmed;
  EXPECT_EQ(fake_.launches(), 1);
  EXPECT_EQ(fake_.live_allocations(), 0);
  EXPECT_EQ(fake_.live_modules(), 0);
  EXPECT_EQ(fake_.retained_contexts(), 1);  // the context stays for the measurements
  EXPECT_FALSE(runner_->context_lost());

  fake_.AddKernel(kEntry, FakeDenseKernel(48, 40, 64));
  proto::RunResult result = Run(Request(Artifact(FakePtx(kEntry, 3))));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
}

TEST_F(GpuKernelRunnerTest, WarmUpKernelThatFaultsLosesTheContext) {
  fake_.AddKernel(kGpuWarmUpEntry, FakeFaultingKernel(kCudaErrorIllegalAddress));
  absl::Status warmed = runner_->WarmUp();
  EXPECT_THAT(warmed.message(), HasSubstr("CUDA_ERROR_ILLEGAL_ADDRESS"));
  EXPECT_TRUE(runner_->context_lost());
}

TEST_F(GpuKernelRunnerTest, WarmUpWithoutItsKernelFailsNamingTheEntry) {
  absl::Status warmed = runner_->WarmUp();
  EXPECT_THAT(warmed.message(), HasSubstr(kGpuWarmUpEntry));
  EXPECT_FALSE(runner_->context_lost());
  EXPECT_EQ(fake_.live_allocations(), 0);
}

TEST(GpuKernelRunnerNoDriverTest, MissingDriverIsRuntimeDeviceNamingIt) {
  FakeClock clock;
  GpuKernelRunner runner(GpuKernelRunnerOptions{.driver_library = "/nonexistent/libcuda.so.1"},
                         &clock);
  PreparedWorkloadCache workloads;
  PreparedWorkload* workload = *workloads.Get("dense", kArgs, 1);
  proto::RunResult result =
      runner.Run(Request(Artifact(FakePtx(kEntry, 3))), *workload, proto::RunResult(), {});
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("cannot use CUDA device 0: no CUDA driver: "
                                            "dlopen(/nonexistent/libcuda.so.1)"));
  EXPECT_FALSE(runner.context_lost());
}

TEST(PtxEntryParamCountTest, CountsTheNamedEntrysParameters) {
  const std::string ptx = FakePtx("first", 2) + FakePtx("second", 5) +
                          ".visible .entry no_params\n{\n\tret;\n}\n" +
                          ".visible .entry empty_list ( )\n{\n\tret;\n}\n";
  EXPECT_EQ(PtxEntryParamCount(ptx, "first"), 2);
  EXPECT_EQ(PtxEntryParamCount(ptx, "second"), 5);
  EXPECT_EQ(PtxEntryParamCount(ptx, "no_params"), 0);
  EXPECT_EQ(PtxEntryParamCount(ptx, "empty_list"), 0);
  EXPECT_EQ(PtxEntryParamCount(ptx, "fir"), std::nullopt);  // a prefix is not a match
  EXPECT_EQ(PtxEntryParamCount(ptx, "absent"), std::nullopt);
}

}  // namespace
}  // namespace tunefleet

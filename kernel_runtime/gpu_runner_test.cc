// The GPU path on a real NVIDIA GPU: hand-written PTX kernels
// (testdata/dense_*.ptx) through the runner child in process and through a
// Runner's child process, and the agent's GPU detection. Those tests skip
// with "no GPU: <why>" where libcuda.so.1 or a device is missing; the same
// flows run against a fake driver everywhere (gpu_kernel_runner_test.cc,
// runner_child_test.cc), and the child-process flow of a lost CUDA context
// runs here over a stand-in libcuda (testdata/libfake_cuda.so).
#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/gpu_artifact.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_runtime/cuda_driver.h"
#include "kernel_runtime/device_info.h"
#include "kernel_runtime/fake_cuda_driver.h"
#include "kernel_runtime/runner.h"
#include "kernel_runtime/runner_child.h"
#include "kernel_runtime/test_kernels.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using ::tunefleet::testing::DenseTestRequest;
using ::tunefleet::testing::ReadTestKernel;
using ::tunefleet::testing::RunfilePath;

int Code(MeasureErrorNo error_no) { return static_cast<int>(error_no); }

// Why this machine cannot run the tests, or nothing when it can.
std::optional<std::string> NoGpuReason() {
  absl::StatusOr<GpuDeviceProperties> gpu = DetectGpu(0);
  if (gpu.ok()) return std::nullopt;
  return std::string(gpu.status().message());
}

#define SKIP_WITHOUT_GPU()                                   \
  do {                                                       \
    if (std::optional<std::string> reason = NoGpuReason()) { \
      GTEST_SKIP() << "no GPU: " << *reason;                 \
    }                                                        \
  } while (0)

// The dense test workload (48x40x64, NK) with testdata/<ptx_file> as its
// GPU artifact: one thread per output element, 8 blocks of 256.
proto::RunRequest GpuRequest(const std::string& ptx_file,
                             std::array<int64_t, 3> block = {256, 1, 1}) {
  proto::RunRequest request = DenseTestRequest("libdense_ok.so");
  GpuLaunch launch;
  launch.entry = ::tunefleet::testing::kTestEntry;
  launch.grid = {8, 1, 1};
  launch.block = block;
  request.set_shared_object(FormatGpuArtifact(launch, ReadTestKernel(ptx_file)));
  request.set_artifact_hash(ptx_file);
  request.mutable_options()->set_enable_cpu_cache_flush(false);
  return request;
}

class GpuRunnerChildTest : public ::testing::Test {
 protected:
  void SetUp() override { SKIP_WITHOUT_GPU(); }

  RealClock clock_;
  RunnerChild child_{RunnerChildOptions{.num_threads = 1, .pin_threads = false}, &clock_};
};

TEST_F(GpuRunnerChildTest, CorrectKernelPassesTheCheckAndIsTimed) {
  proto::RunResult result = child_.Handle(GpuRequest("dense_ok.ptx"));
  ASSERT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  ASSERT_EQ(result.costs_size(), 1);  // 3 repeats, trimmed
  for (double cost : result.costs()) EXPECT_GT(cost, 0.0);
  // And again: buffers and context are reused.
  result = child_.Handle(GpuRequest("dense_ok.ptx"));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
}

TEST_F(GpuRunnerChildTest, MinRepeatMsIsHonoured) {
  proto::RunRequest request = GpuRequest("dense_ok.ptx");
  request.mutable_options()->set_min_repeat_ms(20);
  proto::RunResult result = child_.Handle(request);
  ASSERT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  EXPECT_EQ(result.costs_size(), 1);
}

TEST_F(GpuRunnerChildTest, KernelSkippingAnElementIsWrongAnswer) {
  proto::RunResult result = child_.Handle(GpuRequest("dense_skip.ptx"));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kWrongAnswer));
  EXPECT_THAT(result.error_msg(), HasSubstr("at index 83 [2, 3]: got nan"));
  EXPECT_THAT(result.error_msg(), HasSubstr("1 of 1920 elements mismatch"));
}

TEST_F(GpuRunnerChildTest, BrokenPtxIsCompileDeviceWithTheJitLog) {
  proto::RunRequest request = GpuRequest("dense_ok.ptx");
  GpuLaunch launch;
  launch.entry = ::tunefleet::testing::kTestEntry;
  request.set_shared_object(FormatGpuArtifact(
      launch,
      ".version 7.0\n.target sm_75\n.address_size 64\n"
      ".visible .entry dense_kernel(.param .u64 a, .param .u64 b, .param .u64 c)\n"
      "{\n\tthis is not an instruction;\n}\n"));
  proto::RunResult result = child_.Handle(request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kCompileDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("cuModuleLoadDataEx failed"));
  EXPECT_THAT(result.error_msg(), HasSubstr("JIT log: "));
  EXPECT_FALSE(child_.must_exit());
}

TEST_F(GpuRunnerChildTest, BlockLargerThanTheDeviceAllowsIsInstantiationError) {
  proto::RunResult result = child_.Handle(GpuRequest("dense_ok.ptx", {2048, 1, 1}));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kInstantiationError));
  EXPECT_THAT(result.error_msg(), HasSubstr("has 2048 threads; the device allows 1024"));
}

// Through a real child process: the faulting kernel's trial is
// RUNTIME_DEVICE, the child exits (its CUDA context is unusable), and the
// Runner's next trial, GPU or CPU, gets a fresh child.
TEST(GpuRunnerTest, IllegalAddressFailsTheTrialAndTheNextTrialGetsAFreshChild) {
  SKIP_WITHOUT_GPU();
  absl::StatusOr<std::unique_ptr<Runner>> runner = Runner::Create(RunnerOptions{
      .runner_path = RunfilePath("kernel_runtime/tunefleet_runner"), .num_threads = 1});
  ASSERT_TRUE(runner.ok()) << runner.status();
  proto::RunResult ok = (*runner)->Run(GpuRequest("dense_ok.ptx"));
  ASSERT_EQ(ok.error_no(), Code(MeasureErrorNo::kNoError)) << ok.error_msg();
  const std::optional<pid_t> first_child = (*runner)->child_pid();
  ASSERT_TRUE(first_child.has_value());

  proto::RunResult fault = (*runner)->Run(GpuRequest("dense_fault.ptx"));
  EXPECT_EQ(fault.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(fault.error_msg(), HasSubstr("CUDA_ERROR_ILLEGAL_ADDRESS"));
  EXPECT_FALSE((*runner)->child_pid().has_value());  // exited and reaped

  ok = (*runner)->Run(GpuRequest("dense_ok.ptx"));
  EXPECT_EQ(ok.error_no(), Code(MeasureErrorNo::kNoError)) << ok.error_msg();
  ASSERT_TRUE((*runner)->child_pid().has_value());
  EXPECT_NE((*runner)->child_pid(), first_child);
  ok = (*runner)->Run(DenseTestRequest("libdense_ok.so"));
  EXPECT_EQ(ok.error_no(), Code(MeasureErrorNo::kNoError)) << ok.error_msg();
}

// The same flow on any machine, over the stand-in driver
// testdata/libfake_cuda.so: the child really exits after the fault and the
// Runner really reaps it and starts another.
proto::RunRequest FakeDriverRequest(const std::string& entry) {
  proto::RunRequest request = DenseTestRequest("libdense_ok.so");
  GpuLaunch launch;
  launch.entry = entry;
  launch.grid = {8, 1, 1};
  launch.block = {256, 1, 1};
  request.set_shared_object(FormatGpuArtifact(launch, ::tunefleet::testing::FakePtx(entry, 3)));
  request.set_entry_name(entry);
  return request;
}

TEST(GpuRunnerFakeDriverTest, ChildExitsAfterALostContextAndTheNextTrialGetsAFreshOne) {
  absl::StatusOr<std::unique_ptr<Runner>> runner = Runner::Create(
      RunnerOptions{.runner_path = RunfilePath("kernel_runtime/tunefleet_runner"),
                    .num_threads = 1,
                    .cuda_driver_library = RunfilePath("kernel_runtime/testdata/libfake_cuda.so")});
  ASSERT_TRUE(runner.ok()) << runner.status();
  proto::RunResult ok = (*runner)->Run(FakeDriverRequest("dense_kernel"));
  ASSERT_EQ(ok.error_no(), Code(MeasureErrorNo::kNoError)) << ok.error_msg();
  const std::optional<pid_t> first_child = (*runner)->child_pid();
  ASSERT_TRUE(first_child.has_value());

  proto::RunResult fault = (*runner)->Run(FakeDriverRequest("fault_kernel"));
  EXPECT_EQ(fault.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(fault.error_msg(), HasSubstr("CUDA_ERROR_ILLEGAL_ADDRESS"));
  EXPECT_THAT(fault.error_msg(), HasSubstr("the CUDA context is lost"));
  EXPECT_FALSE((*runner)->child_pid().has_value());  // exited and reaped at once

  ok = (*runner)->Run(FakeDriverRequest("dense_kernel"));
  EXPECT_EQ(ok.error_no(), Code(MeasureErrorNo::kNoError)) << ok.error_msg();
  ASSERT_TRUE((*runner)->child_pid().has_value());
  EXPECT_NE((*runner)->child_pid(), first_child);
  ok = (*runner)->Run(DenseTestRequest("libdense_ok.so"));
  EXPECT_EQ(ok.error_no(), Code(MeasureErrorNo::kNoError)) << ok.error_msg();
}

TEST(GpuDeviceInfoTest, TheAgentReportsTheGpu) {
  SKIP_WITHOUT_GPU();
  absl::StatusOr<proto::DeviceInfo> device = DetectAgentDevice({.require_gpu = true});
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_FALSE(device->gpu_name().empty());
  EXPECT_GE(device->compute_capability_major(), 5);
  EXPECT_GE(device->max_threads_per_block(), 1024);
  EXPECT_GE(device->max_shared_memory_per_block(), 48 * 1024);
  EXPECT_GE(device->max_registers_per_block(), 64 * 1024);
}

}  // namespace
}  // namespace tunefleet

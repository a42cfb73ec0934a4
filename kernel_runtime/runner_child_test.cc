#include "kernel_runtime/runner_child.h"

#include <unistd.h>

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/gpu_artifact.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_runtime/cuda_driver.h"
#include "kernel_runtime/fake_cuda_driver.h"
#include "kernel_runtime/runner_protocol.h"
#include "kernel_runtime/test_kernels.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using ::tunefleet::testing::DenseTestRequest;

int Code(MeasureErrorNo error_no) { return static_cast<int>(error_no); }

class RunnerChildTest : public ::testing::Test {
 protected:
  RealClock clock_;
  RunnerChild child_{RunnerChildOptions{.num_threads = 2, .pin_threads = false}, &clock_};
};

TEST_F(RunnerChildTest, CorrectKernelGivesTrimmedCostsAndTheirSpread) {
  proto::RunResult result = child_.Handle(DenseTestRequest("libdense_ok.so"));
  ASSERT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  // 3 repeats timed; AutoTVM's trimming keeps the middle one.
  ASSERT_EQ(result.costs_size(), 1);
  EXPECT_EQ(result.timed_repeats(), 3);
  EXPECT_TRUE(result.has_cost_stddev_s());
  EXPECT_TRUE(result.has_cost_rel_ci());
  for (double cost : result.costs()) EXPECT_GT(cost, 0.0);
  EXPECT_GE(result.load_seconds(), 0.0);
  EXPECT_GE(result.check_seconds(), 0.0);
  EXPECT_GT(result.run_seconds(), 0.0);
}

// libdense_staged.so gives the right answer only when prepare, the entry and
// finish all run on the staged buffers (common/kernel_abi.h).
TEST_F(RunnerChildTest, StagedKernelRunsPrepareEntryAndFinish) {
  proto::RunResult result = child_.Handle(DenseTestRequest("libdense_staged.so"));
  ASSERT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  EXPECT_EQ(result.costs_size(), 1);
  // The same workload next with a self-contained kernel: nothing staged leaks.
  result = child_.Handle(DenseTestRequest("libdense_ok.so"));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
}

TEST_F(RunnerChildTest, SameWorkloadIsServedAgainFromTheCache) {
  for (int trial = 0; trial < 3; ++trial) {
    proto::RunResult result = child_.Handle(DenseTestRequest("libdense_ok.so"));
    ASSERT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  }
}

TEST_F(RunnerChildTest, WrongAnswerNamesTheElement) {
  proto::RunResult result = child_.Handle(DenseTestRequest("libdense_wrong.so"));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kWrongAnswer));
  EXPECT_THAT(result.error_msg(), HasSubstr("dense(K=64,M=48,N=40,layout=NK)"));
  EXPECT_THAT(result.error_msg(), HasSubstr("at index 83 [2, 3]"));
  EXPECT_THAT(result.error_msg(), HasSubstr("1 of 1920 elements mismatch"));
  EXPECT_EQ(result.costs_size(), 0);
}

TEST_F(RunnerChildTest, WrongKernelIsTimedWhenCheckingIsOff) {
  proto::RunRequest request = DenseTestRequest("libdense_wrong.so");
  request.mutable_options()->set_check_correctness(false);
  proto::RunResult result = child_.Handle(request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  EXPECT_EQ(result.costs_size(), 1);
}

TEST_F(RunnerChildTest, CorrectKernelAfterAWrongOneStillPasses) {
  ASSERT_EQ(child_.Handle(DenseTestRequest("libdense_wrong.so")).error_no(),
            Code(MeasureErrorNo::kWrongAnswer));
  proto::RunResult result = child_.Handle(DenseTestRequest("libdense_ok.so"));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
}

TEST_F(RunnerChildTest, MissingEntryIsRuntimeDeviceNamingTheSymbol) {
  proto::RunResult result = child_.Handle(DenseTestRequest("libdense_missing_entry.so"));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("symbol \"dense_kernel\" not found"));
  EXPECT_THAT(result.error_msg(), HasSubstr("libdense_missing_entry.so"));
}

TEST_F(RunnerChildTest, UnloadableObjectIsRuntimeDevice) {
  proto::RunRequest request = DenseTestRequest("libdense_ok.so");
  request.set_shared_object("definitely not ELF");
  proto::RunResult result = child_.Handle(request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("cannot load the kernel: dlopen of shared object"));
}

TEST_F(RunnerChildTest, NonZeroReturnIsRuntimeDevice) {
  proto::RunResult result = child_.Handle(DenseTestRequest("libdense_returns_error.so"));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("kernel returned 7 on the correctness check run"));

  proto::RunRequest unchecked = DenseTestRequest("libdense_returns_error.so");
  unchecked.mutable_options()->set_check_correctness(false);
  result = child_.Handle(unchecked);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("kernel returned 7 during the warm-up call"));
}

TEST_F(RunnerChildTest, BadWorkloadIsUnknown) {
  proto::RunRequest request = DenseTestRequest("libdense_ok.so");
  request.set_workload_name("conv9d");
  proto::RunResult result = child_.Handle(request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kUnknown));
  EXPECT_THAT(result.error_msg(), HasSubstr("invalid workload in request: unknown workload"));

  request = DenseTestRequest("libdense_ok.so");
  request.set_workload_args_json(R"({"M": 48})");
  result = child_.Handle(request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kUnknown));
  EXPECT_THAT(result.error_msg(), HasSubstr("missing argument \"N\""));
}

TEST(RunnerChildCpuBudgetTest, MustExitOnceTheProcessUsedItsCpuBudget) {
  FakeClock clock;
  RunnerChild unlimited(RunnerChildOptions{.num_threads = 1, .pin_threads = false}, &clock);
  EXPECT_FALSE(unlimited.must_exit());
  // This test process has used more than a nanosecond of CPU time already.
  RunnerChild spent(
      RunnerChildOptions{.num_threads = 1, .pin_threads = false, .exit_after_cpu_seconds = 1e-9},
      &clock);
  EXPECT_TRUE(spent.must_exit());
  RunnerChild fresh(
      RunnerChildOptions{.num_threads = 1, .pin_threads = false, .exit_after_cpu_seconds = 1e6},
      &clock);
  EXPECT_FALSE(fresh.must_exit());
}

TEST(RunnerChildOptionsTest, UnsetMeasureOptionsTakeTheDefaults) {
  // Only the timeout set: number, repeat and check_correctness must be the
  // defaults (4, 3, true), not proto3's zeros.
  FakeClock clock;
  RunnerChild child(RunnerChildOptions{.num_threads = 1, .pin_threads = false}, &clock);
  proto::RunRequest request = DenseTestRequest("libdense_wrong.so");
  request.clear_options();
  request.mutable_options()->set_timeout_s(30);
  proto::RunResult result = child.Handle(request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kWrongAnswer)) << result.error_msg();

  request = DenseTestRequest("libdense_ok.so");
  request.clear_options();
  result = child.Handle(request);
  ASSERT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  EXPECT_EQ(result.timed_repeats(), 3);
}

TEST_F(RunnerChildTest, ExplicitlyBadMeasureOptionsAreUnknown) {
  proto::RunRequest request = DenseTestRequest("libdense_ok.so");
  request.mutable_options()->set_number(0);
  proto::RunResult result = child_.Handle(request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kUnknown));
  EXPECT_THAT(result.error_msg(), HasSubstr("invalid measure options: measure option number = 0"));
}

TEST(RunnerChildCooldownTest, SleepsOnceAfterTheTrialOutsideTheStageTimes) {
  FakeClock clock;
  RunnerStatusPage page{};
  RunnerChild child(RunnerChildOptions{.num_threads = 1, .pin_threads = false}, &clock, &page);
  proto::RunRequest request = DenseTestRequest("libdense_ok.so");
  request.mutable_options()->set_repeat(5);
  request.mutable_options()->set_cooldown_interval_s(0.25);
  proto::RunResult result = child.Handle(request);
  ASSERT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  // Once per trial, not between the 5 repeats (the old evaluator slept 4 times).
  EXPECT_THAT(clock.sleeps(), ::testing::ElementsAre(250'000'000));
  EXPECT_EQ(static_cast<RunnerStage>(page.stage.load()), RunnerStage::kCoolingDown);
  // Only the fake clock's sleep moved time: no stage counted it.
  EXPECT_EQ(result.prepare_seconds() + result.load_seconds() + result.check_seconds() +
                result.run_seconds(),
            0.0);
}

TEST(RunnerChildAdaptiveTest, RepeatsUntilTheCapWhenTheTargetIsNotMet) {
  FakeClock clock;  // every cost reads 0 s: no interval, so never within target
  RunnerChild child(RunnerChildOptions{.num_threads = 1, .pin_threads = false}, &clock);
  proto::RunRequest request = DenseTestRequest("libdense_ok.so");
  request.mutable_options()->set_repeat(3);
  request.mutable_options()->set_max_repeat(6);
  // The cap ends it.
  request.mutable_options()->set_target_rel_ci(1e-9);
  proto::RunResult result = child.Handle(request);
  ASSERT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  EXPECT_EQ(result.timed_repeats(), 6);
  EXPECT_EQ(result.costs_size(), 4);
}

TEST(RunnerChildStatusPageTest, PublishesStageAndPreparationTime) {
  RealClock clock;
  RunnerStatusPage page{};
  RunnerChild child(RunnerChildOptions{.num_threads = 1, .pin_threads = false}, &clock, &page);
  proto::RunResult result = child.Handle(DenseTestRequest("libdense_ok.so"));
  ASSERT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  EXPECT_EQ(static_cast<RunnerStage>(page.stage.load()), RunnerStage::kTimingRuns);
  EXPECT_GT(page.prepare_nanos.load(), 0);
}

// ---- GPU artifacts: dispatch by content, against the fake driver.

// DenseTestRequest's workload and options with a GPU artifact for the fake
// driver (entry dense_kernel, three tensor parameters).
proto::RunRequest GpuTestRequest() {
  proto::RunRequest request = DenseTestRequest("libdense_ok.so");
  GpuLaunch launch;
  launch.entry = ::tunefleet::testing::kTestEntry;
  launch.grid = {8, 1, 1};
  launch.block = {256, 1, 1};
  request.set_shared_object(
      FormatGpuArtifact(launch, ::tunefleet::testing::FakePtx(launch.entry, 3)));
  return request;
}

RunnerChildOptions OptionsWithFakeGpu(::tunefleet::testing::FakeCuda& fake) {
  RunnerChildOptions options{.num_threads = 1, .pin_threads = false};
  options.gpu.open_driver = [&fake] { return CudaDriver::FromApi(fake.api(), "fake"); };
  return options;
}

TEST(RunnerChildGpuTest, GpuArtifactRunsOnTheGpuAndSharedObjectsStillOnTheCpu) {
  ::tunefleet::testing::FakeCuda fake;
  fake.AddKernel(::tunefleet::testing::kTestEntry,
                 ::tunefleet::testing::FakeDenseKernel(48, 40, 64));
  RealClock clock;
  RunnerChild child(OptionsWithFakeGpu(fake), &clock);
  proto::RunResult result = child.Handle(GpuTestRequest());
  ASSERT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  EXPECT_EQ(result.costs_size(), 1);          // 3 repeats, trimmed
  EXPECT_EQ(fake.launches(), 1 + 1 + 3 * 2);  // check, warm-up, 3 repeats of 2

  result = child.Handle(DenseTestRequest("libdense_ok.so"));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  EXPECT_EQ(fake.launches(), 8);
  EXPECT_FALSE(child.must_exit());
}

TEST(RunnerChildGpuTest, GpuArtifactWithoutADriverFailsBeforePreparingTheWorkload) {
  RealClock clock;
  RunnerChildOptions options{.num_threads = 1, .pin_threads = false};
  options.gpu.driver_library = "/nonexistent/libcuda.so.1";
  RunnerChild child(options, &clock);
  proto::RunResult result = child.Handle(GpuTestRequest());
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(
      result.error_msg(),
      HasSubstr("cannot run a GPU kernel: no CUDA driver: dlopen(/nonexistent/libcuda.so.1)"));
  EXPECT_EQ(result.prepare_seconds(), 0);
  // The same child still measures CPU kernels.
  result = child.Handle(DenseTestRequest("libdense_ok.so"));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
}

// A fault that loses the CUDA context: Serve answers, publishes kExiting
// and returns instead of taking the next request, so the process ends.
TEST(RunnerChildGpuTest, ServeAnswersThenStopsAfterTheContextIsLost) {
  ::tunefleet::testing::FakeCuda fake;
  fake.AddKernel(::tunefleet::testing::kTestEntry,
                 ::tunefleet::testing::FakeFaultingKernel(kCudaErrorIllegalAddress));
  RealClock clock;
  RunnerStatusPage page{};
  RunnerChild child(OptionsWithFakeGpu(fake), &clock, &page);
  int requests[2], results[2];
  ASSERT_EQ(pipe(requests), 0);
  ASSERT_EQ(pipe(results), 0);
  const std::string payload = GpuTestRequest().SerializeAsString();
  ASSERT_TRUE(WriteFrame(requests[1], payload, kNoDeadline).ok());
  ASSERT_TRUE(WriteFrame(requests[1], payload, kNoDeadline).ok());  // must stay unread

  ASSERT_TRUE(child.Serve(requests[0], results[1]).ok());
  EXPECT_TRUE(child.must_exit());
  EXPECT_EQ(static_cast<RunnerStage>(page.stage.load()), RunnerStage::kExiting);
  EXPECT_EQ(page.requests_received.load(), 1u);
  close(results[1]);
  ASSERT_TRUE(ReadExactBytes(results[0], kRunnerHello.size(), kNoDeadline).ok());
  absl::StatusOr<std::string> frame = ReadFrame(results[0], kNoDeadline);
  ASSERT_TRUE(frame.ok()) << frame.status();
  proto::RunResult result;
  ASSERT_TRUE(result.ParseFromString(*frame));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("CUDA_ERROR_ILLEGAL_ADDRESS"));
  EXPECT_TRUE(absl::IsUnavailable(ReadFrame(results[0], kNoDeadline).status()));  // one answer
  for (int fd : {requests[0], requests[1], results[0]}) close(fd);
}

}  // namespace
}  // namespace tunefleet

#include "kernel_runtime/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_runtime/runner_protocol.h"
#include "kernel_runtime/test_kernels.h"
#include "tuner_core/measure/measure.h"

extern char** environ;

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using ::tunefleet::testing::DenseTestRequest;
using ::tunefleet::testing::RunfilePath;

int Code(MeasureErrorNo error_no) { return static_cast<int>(error_no); }

std::string RunnerBinary() { return RunfilePath("kernel_runtime/tunefleet_runner"); }

std::unique_ptr<Runner> MakeRunner() {
  auto runner = Runner::Create(RunnerOptions{.runner_path = RunnerBinary(), .num_threads = 2});
  EXPECT_TRUE(runner.ok()) << runner.status();
  return std::move(runner).value();
}

void ExpectSuccess(const proto::RunResult& result) {
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  ASSERT_EQ(result.costs_size(), 1);  // 3 repeats, min and max dropped
  for (double cost : result.costs()) EXPECT_GT(cost, 0.0);
}

// Polls waitpid for up to `seconds`; true when `pid` exited (and is reaped).
bool WaitForExitWithin(pid_t pid, double seconds) {
  for (int i = 0; i < seconds * 100; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return true;
    usleep(10'000);
  }
  return false;
}

TEST(RunnerTest, CorrectKernelSucceedsAndTheChildIsReused) {
  auto runner = MakeRunner();
  ExpectSuccess(runner->Run(DenseTestRequest("libdense_ok.so")));
  const std::optional<pid_t> first_child = runner->child_pid();
  ASSERT_TRUE(first_child.has_value());
  ExpectSuccess(runner->Run(DenseTestRequest("libdense_ok.so")));
  EXPECT_EQ(runner->child_pid(), first_child);
}

TEST(RunnerTest, RecycleEndsTheChildAndTheNextRunStartsAFreshOne) {
  auto runner = MakeRunner();
  runner->Recycle();  // no child yet: nothing to do
  ExpectSuccess(runner->Run(DenseTestRequest("libdense_ok.so")));
  const std::optional<pid_t> first_child = runner->child_pid();
  ASSERT_TRUE(first_child.has_value());
  runner->Recycle();
  EXPECT_FALSE(runner->child_pid().has_value());
  EXPECT_NE(kill(*first_child, 0), 0) << "the old child must be gone (and reaped)";
  ExpectSuccess(runner->Run(DenseTestRequest("libdense_ok.so")));
  ASSERT_TRUE(runner->child_pid().has_value());
  EXPECT_NE(runner->child_pid(), first_child);
}

TEST(RunnerTest, SegfaultIsRuntimeDeviceAndTheNextRunGetsANewChild) {
  auto runner = MakeRunner();
  proto::RunResult crashed = runner->Run(DenseTestRequest("libdense_segfault.so"));
  EXPECT_EQ(crashed.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(crashed.error_msg(), HasSubstr("killed by signal 11 (SIGSEGV)"));
  EXPECT_THAT(crashed.error_msg(), HasSubstr("while running the kernel (correctness check run)"));
  EXPECT_FALSE(runner->child_pid().has_value());  // reaped, not a zombie

  ExpectSuccess(runner->Run(DenseTestRequest("libdense_ok.so")));
}

TEST(RunnerTest, SegfaultInTimingRunsNamesThatStage) {
  auto runner = MakeRunner();
  proto::RunRequest request = DenseTestRequest("libdense_segfault.so");
  request.mutable_options()->set_check_correctness(false);
  proto::RunResult crashed = runner->Run(request);
  EXPECT_EQ(crashed.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(crashed.error_msg(), HasSubstr("(SIGSEGV) while running the kernel (timing runs)"));
}

TEST(RunnerTest, AbortStopsAHangingKernelWithinSecondsAndTheNextRunSucceeds) {
  auto runner = MakeRunner();
  proto::RunRequest hang = DenseTestRequest("libdense_hang.so");
  hang.mutable_options()->set_timeout_s(300);
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    runner->Abort("job job-7 was cancelled");
  });
  const auto start = std::chrono::steady_clock::now();
  proto::RunResult aborted = runner->Run(hang);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  aborter.join();
  EXPECT_NE(aborted.error_no(), Code(MeasureErrorNo::kNoError));
  EXPECT_THAT(aborted.error_msg(), HasSubstr("aborted: job job-7 was cancelled"));
  EXPECT_LT(waited, 60) << "aborted only at the timeout";
  EXPECT_FALSE(runner->child_pid().has_value());
  runner->Abort("nothing runs: ignored");
  ExpectSuccess(runner->Run(DenseTestRequest("libdense_ok.so")));
}

TEST(RunnerTest, HangIsRunTimeoutAndTheNextRunSucceeds) {
  auto runner = MakeRunner();
  proto::RunRequest hang = DenseTestRequest("libdense_hang.so");
  hang.mutable_options()->set_timeout_s(1);
  proto::RunResult timed_out = runner->Run(hang);
  EXPECT_EQ(timed_out.error_no(), Code(MeasureErrorNo::kRunTimeout));
  EXPECT_THAT(timed_out.error_msg(), HasSubstr("no result within timeout_s = 1 s"));
  EXPECT_THAT(timed_out.error_msg(), HasSubstr("running the kernel (correctness check run)"));
  EXPECT_GT(timed_out.run_seconds(), 0.0);  // the time the trial cost
  EXPECT_FALSE(runner->child_pid().has_value());

  ExpectSuccess(runner->Run(DenseTestRequest("libdense_ok.so")));
}

TEST(RunnerTest, WorkloadPreparationDoesNotCountAgainstTheTimeout) {
  // The naive reference of dense 768^3 takes ~0.65 s here, far over 0.2 s; the
  // kernel's own work (a check run and a few timed runs of a 48x40x64
  // kernel) takes milliseconds. The test kernel computes the wrong shape,
  // so the expected outcome is WRONG_ANSWER, not RUN_TIMEOUT.
  auto runner = MakeRunner();
  proto::RunRequest request = DenseTestRequest("libdense_ok.so");
  request.set_workload_args_json(R"({"M": 768, "N": 768, "K": 768})");
  request.mutable_options()->set_timeout_s(0.2);
  proto::RunResult result = runner->Run(request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kWrongAnswer)) << result.error_msg();
  EXPECT_GT(result.prepare_seconds(), 0.0);
}

TEST(RunnerTest, WrongAnswerNamesTheIndex) {
  auto runner = MakeRunner();
  proto::RunResult result = runner->Run(DenseTestRequest("libdense_wrong.so"));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kWrongAnswer));
  EXPECT_THAT(result.error_msg(), HasSubstr("at index 83 [2, 3]"));
  // A wrong answer is an ordinary result: the child lives on.
  EXPECT_TRUE(runner->child_pid().has_value());
}

TEST(RunnerTest, MissingEntryNamesTheSymbol) {
  auto runner = MakeRunner();
  proto::RunResult result = runner->Run(DenseTestRequest("libdense_missing_entry.so"));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("symbol \"dense_kernel\" not found"));
}

TEST(RunnerTest, ChildKilledBetweenTrialsIsReplacedTransparently) {
  auto runner = MakeRunner();
  ExpectSuccess(runner->Run(DenseTestRequest("libdense_ok.so")));
  const pid_t first_child = *runner->child_pid();
  ASSERT_EQ(kill(first_child, SIGKILL), 0);
  // No kernel of the next trial ran in the dead child, so the trial is not
  // charged with its death.
  ExpectSuccess(runner->Run(DenseTestRequest("libdense_ok.so")));
  EXPECT_NE(runner->child_pid(), first_child);
}

TEST(RunnerTest, NonPositiveTimeoutIsUnknown) {
  auto runner = MakeRunner();
  proto::RunRequest request = DenseTestRequest("libdense_ok.so");
  request.mutable_options()->set_timeout_s(0);
  proto::RunResult result = runner->Run(request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kUnknown));
  EXPECT_THAT(result.error_msg(), HasSubstr("timeout_s = 0 is invalid: must be finite and > 0"));
}

TEST(RunnerTest, TimeoutAboveTheCapIsRefusedUnrun) {
  auto runner = MakeRunner();
  proto::RunRequest request = DenseTestRequest("libdense_ok.so");
  request.mutable_options()->set_timeout_s(3600);
  proto::RunResult result = runner->Run(request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kUnknown));
  EXPECT_THAT(result.error_msg(), HasSubstr("exceeds the cap of 600 s"));
  EXPECT_EQ(result.run_seconds(), 0);
}

TEST(RunnerTest, UnsetTimeoutTakesTheDefault) {
  auto runner = MakeRunner();
  proto::RunRequest request = DenseTestRequest("libdense_ok.so");
  request.mutable_options()->clear_timeout_s();
  proto::RunResult result = runner->Run(request);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
}

TEST(RunnerTest, DestroyingTheRunnerKillsAndReapsTheChild) {
  auto runner = MakeRunner();
  ExpectSuccess(runner->Run(DenseTestRequest("libdense_ok.so")));
  const pid_t child = *runner->child_pid();
  runner.reset();
  EXPECT_EQ(kill(child, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST(RunnerTest, CreateFindsTheRunnerInRunfilesWithoutAPath) {
  auto runner = Runner::Create(RunnerOptions{.num_threads = 1});
  ASSERT_TRUE(runner.ok()) << runner.status();
  EXPECT_THAT((*runner)->runner_path(), HasSubstr("tunefleet_runner"));
  ExpectSuccess((*runner)->Run(DenseTestRequest("libdense_ok.so")));
}

TEST(RunnerTest, CreateRejectsAMissingBinary) {
  auto runner = Runner::Create(RunnerOptions{.runner_path = "/nonexistent/tunefleet_runner"});
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(runner.status().message(), HasSubstr("/nonexistent/tunefleet_runner"));
}

TEST(RunnerTest, ABinaryThatIsNotARunnerFailsTheTrialNotTheCaller) {
  auto runner = Runner::Create(RunnerOptions{.runner_path = "/bin/true", .startup_timeout_s = 5});
  ASSERT_TRUE(runner.ok()) << runner.status();
  proto::RunResult result = (*runner)->Run(DenseTestRequest("libdense_ok.so"));
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(result.error_msg(), HasSubstr("did not report ready"));
  EXPECT_THAT(result.error_msg(), HasSubstr("exited with status 0"));
}

// A launcher script (as `qemu-aarch64 -L /` is for an emulated board): it
// records its pid and the command line it was given in `record`, then
// execs that command line, so the recorded pid is the runner's.
std::string WriteRecordingLauncher(const std::string& record) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string script = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/recording_launcher.sh");
  std::ofstream out(script, std::ios::trunc);
  out << "#!/bin/sh\necho \"$$ $*\" > '" << record << "'\nexec \"$@\"\n";
  out.close();
  EXPECT_EQ(chmod(script.c_str(), 0755), 0);
  return script;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

TEST(RunnerTest, LauncherStartsTheRunnerAsTheSameProcess) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string record = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/launcher_record.txt");
  std::remove(record.c_str());
  auto runner = Runner::Create(RunnerOptions{.runner_path = RunnerBinary(),
                                             .launcher = {WriteRecordingLauncher(record)},
                                             .num_threads = 1});
  ASSERT_TRUE(runner.ok()) << runner.status();
  ExpectSuccess((*runner)->Run(DenseTestRequest("libdense_ok.so")));
  const std::optional<pid_t> child = (*runner)->child_pid();
  ASSERT_TRUE(child.has_value());
  const std::string launched = ReadWholeFile(record);
  // "<pid> <runner path> --request_fd=3 ...": the launcher ran, got the
  // runner's whole command line and became the child the Runner watches.
  EXPECT_THAT(launched, ::testing::StartsWith(absl::StrCat(*child, " ", RunnerBinary(), " ")));
  EXPECT_THAT(launched, HasSubstr("--request_fd=3"));
  // The child is reused across trials as without a launcher.
  ExpectSuccess((*runner)->Run(DenseTestRequest("libdense_ok.so")));
  EXPECT_EQ((*runner)->child_pid(), child);
}

TEST(RunnerTest, LauncherProgramIsLookedUpInPathWithItsArguments) {
  // `env -u NAME runner ...` runs the runner, like `qemu-aarch64 -L / runner ...`.
  auto runner = Runner::Create(RunnerOptions{.runner_path = RunnerBinary(),
                                             .launcher = {"env", "-u", "TUNEFLEET_UNUSED"},
                                             .num_threads = 1});
  ASSERT_TRUE(runner.ok()) << runner.status();
  ASSERT_EQ((*runner)->launcher().size(), 3u);
  EXPECT_EQ((*runner)->launcher()[0].front(), '/') << (*runner)->launcher()[0];
  EXPECT_THAT((*runner)->launcher()[0], ::testing::EndsWith("/env"));
  ExpectSuccess((*runner)->Run(DenseTestRequest("libdense_ok.so")));
}

TEST(RunnerTest, CreateRejectsAMissingLauncher) {
  for (const char* program : {"/nonexistent/qemu-aarch64", "tunefleet-no-such-launcher"}) {
    auto runner = Runner::Create(
        RunnerOptions{.runner_path = RunnerBinary(), .launcher = {program, "-L", "/"}});
    EXPECT_EQ(runner.status().code(), absl::StatusCode::kNotFound) << program;
    EXPECT_THAT(runner.status().message(), HasSubstr(program));
  }
}

// The parent side of the protocol by hand: start a child, make it hang in
// a kernel, then close its request pipe as a dying parent would. The child
// must exit on its own although its main thread never returns.
TEST(RunnerChildProcessTest, ExitsWhenTheParentGoesAwayEvenWhileHung) {
  int request_pipe[2], result_pipe[2];
  ASSERT_EQ(pipe2(request_pipe, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(result_pipe, O_CLOEXEC), 0);
  const int status_fd = CreateRunnerStatusFd();
  ASSERT_GE(status_fd, 0);
  RunnerStatusPage* page = MapRunnerStatusPage(status_fd);
  ASSERT_NE(page, nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, request_pipe[0], kRunnerRequestFd);
  posix_spawn_file_actions_adddup2(&actions, result_pipe[1], kRunnerResultFd);
  posix_spawn_file_actions_adddup2(&actions, status_fd, kRunnerStatusFd);
  std::string binary = RunnerBinary();
  std::string arg_status = "--status_fd=5";
  std::string arg_threads = "--num_threads=1";
  std::string arg_pin = "--pin_threads=false";
  char* argv[] = {binary.data(), arg_status.data(), arg_threads.data(), arg_pin.data(), nullptr};
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv, environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(request_pipe[0]);
  close(result_pipe[1]);
  close(status_fd);

  const int64_t deadline = SystemClock().NowNanos() + int64_t{30} * 1'000'000'000;
  auto hello = ReadExactBytes(result_pipe[0], kRunnerHello.size(), deadline);
  ASSERT_TRUE(hello.ok()) << hello.status();
  EXPECT_EQ(*hello, kRunnerHello);
  proto::RunRequest hang = DenseTestRequest("libdense_hang.so");
  ASSERT_TRUE(WriteFrame(request_pipe[1], hang.SerializeAsString(), deadline).ok());
  // Wait (bounded) until the child is stuck in the kernel.
  while (static_cast<RunnerStage>(page->stage.load()) != RunnerStage::kCheckRun &&
         SystemClock().NowNanos() < deadline) {
    usleep(1000);
  }
  EXPECT_EQ(static_cast<RunnerStage>(page->stage.load()), RunnerStage::kCheckRun);

  close(request_pipe[1]);  // as the OS does when the parent dies
  const bool exited = WaitForExitWithin(pid, 10);
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  close(result_pipe[0]);
  UnmapRunnerStatusPage(page);
  EXPECT_TRUE(exited) << "the runner child outlived its parent's pipe";
}

}  // namespace
}  // namespace tunefleet

// The runner child's sandbox, end to end: each attack kernel in testdata/
// (sandbox_*.c) goes through a real Runner and tunefleet_runner, is stopped
// and reported as a runtime error naming the cause, and the same Runner then
// measures a good kernel. Controls with the sandbox off show the attacks
// are real.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "device_agent/runner.h"
#include "device_agent/runner_protocol.h"
#include "device_agent/test_kernels.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using ::tunefleet::testing::DenseTestRequest;
using ::tunefleet::testing::RunfilePath;

constexpr char kTmpEscape[] = "/tmp/tunefleet_sandbox_escape_tmp";

int Code(MeasureErrorNo error_no) { return static_cast<int>(error_no); }

std::unique_ptr<Runner> MakeRunner(RunnerSandboxOptions sandbox = {}) {
  auto runner =
      Runner::Create(RunnerOptions{.runner_path = RunfilePath("device_agent/tunefleet_runner"),
                                   .num_threads = 2,
                                   .sandbox = sandbox});
  EXPECT_TRUE(runner.ok()) << runner.status();
  return std::move(runner).value();
}

void ExpectSuccess(const proto::RunResult& result) {
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kNoError)) << result.error_msg();
  EXPECT_EQ(result.costs_size(), 1) << result.error_msg();
}

// Runs the attack `kernel_file`, expects the sandbox to stop it at
// `syscall`, then expects the same Runner to measure dense_ok.
void ExpectForbiddenThenCarryOn(Runner& runner, const std::string& kernel_file,
                                const std::string& syscall) {
  proto::RunResult stopped = runner.Run(DenseTestRequest(kernel_file));
  EXPECT_EQ(stopped.error_no(), Code(MeasureErrorNo::kRuntimeDevice)) << stopped.error_msg();
  EXPECT_THAT(stopped.error_msg(),
              HasSubstr(absl::StrCat("sandbox: forbidden system call (", syscall, ")")));
  EXPECT_THAT(stopped.error_msg(), HasSubstr("killed by signal 31 (SIGSYS)"));
  EXPECT_FALSE(runner.child_pid().has_value()) << "the stopped child must be reaped";
  ExpectSuccess(runner.Run(DenseTestRequest("libdense_ok.so")));
}

bool Exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

std::string OutsideEscapePath() {
  const char* tmpdir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmpdir != nullptr ? tmpdir : ".", "/tunefleet_sandbox_escape");
}

TEST(RunnerSandboxTest, SocketIsRefusedAndTheSameRunnerMeasuresAGoodKernelAfter) {
  auto runner = MakeRunner();
  ExpectForbiddenThenCarryOn(*runner, "libsandbox_socket.so", "socket");
}

TEST(RunnerSandboxTest, SocketFromThePoolThreadsIsRefused) {
  auto runner = MakeRunner();
  ExpectForbiddenThenCarryOn(*runner, "libsandbox_socket_in_pool.so", "socket");
}

TEST(RunnerSandboxTest, ConnectToLoopbackIsRefused) {
  auto runner = MakeRunner();
  ExpectForbiddenThenCarryOn(*runner, "libsandbox_connect.so", "connect");
}

TEST(RunnerSandboxTest, ForkIsRefused) {
  auto runner = MakeRunner();
  // glibc's fork() is the clone system call without CLONE_THREAD.
  ExpectForbiddenThenCarryOn(*runner, "libsandbox_fork.so", "clone");
}

TEST(RunnerSandboxTest, ExecOfAShellIsRefused) {
  auto runner = MakeRunner();
  ExpectForbiddenThenCarryOn(*runner, "libsandbox_exec.so", "execve");
}

TEST(RunnerSandboxTest, SignallingTheAgentIsRefused) {
  auto runner = MakeRunner();
  ExpectForbiddenThenCarryOn(*runner, "libsandbox_signal_parent.so", "kill");
}

TEST(RunnerSandboxTest, WritingAFileOutsideIsRefusedAndNoFileAppears) {
  const std::string path = OutsideEscapePath();
  unlink(path.c_str());
  auto runner = MakeRunner();
  ExpectForbiddenThenCarryOn(*runner, "libsandbox_write_file.so", "openat");
  EXPECT_FALSE(Exists(path)) << path;
}

TEST(RunnerSandboxTest, WritingAFileInTmpIsRefusedAndNoFileAppears) {
  unlink(kTmpEscape);
  auto runner = MakeRunner();
  ExpectForbiddenThenCarryOn(*runner, "libsandbox_write_tmp.so", "openat");
  EXPECT_FALSE(Exists(kTmpEscape));
}

TEST(RunnerSandboxTest, AllocatingBeyondTheMemoryLimitFails) {
  auto runner = MakeRunner({.memory_limit_mb = 1024});
  proto::RunResult refused = runner->Run(DenseTestRequest("libsandbox_big_alloc.so"));
  EXPECT_EQ(refused.error_no(), Code(MeasureErrorNo::kRuntimeDevice)) << refused.error_msg();
  EXPECT_THAT(refused.error_msg(), HasSubstr("kernel returned 12"));
  ExpectSuccess(runner->Run(DenseTestRequest("libdense_ok.so")));
  // Control: under a limit above it, the same allocation succeeds.
  ExpectSuccess(
      MakeRunner({.memory_limit_mb = 8192})->Run(DenseTestRequest("libsandbox_big_alloc.so")));
}

TEST(RunnerSandboxTest, SpinningPastTheCpuLimitIsStoppedBeforeTheTimeout) {
  auto runner = MakeRunner({.cpu_limit_s = 1});
  proto::RunRequest spin = DenseTestRequest("libdense_hang.so");
  spin.mutable_options()->set_timeout_s(600);  // so only the CPU limit can stop it
  proto::RunResult stopped = runner->Run(spin);
  EXPECT_EQ(stopped.error_no(), Code(MeasureErrorNo::kRuntimeDevice)) << stopped.error_msg();
  EXPECT_THAT(stopped.error_msg(), HasSubstr("sandbox: CPU time limit (1 s"));
  EXPECT_THAT(stopped.error_msg(), HasSubstr("SIGXCPU"));
  ExpectSuccess(runner->Run(DenseTestRequest("libdense_ok.so")));
}

TEST(RunnerSandboxTest, KernelsMayStartThreads) {
  auto runner = MakeRunner();
  ExpectSuccess(runner->Run(DenseTestRequest("libsandbox_threads.so")));
  ExpectSuccess(runner->Run(DenseTestRequest("libdense_ok.so")));
}

TEST(RunnerSandboxTest, CrashesAreStillReportedAsBefore) {
  auto runner = MakeRunner();
  proto::RunResult crashed = runner->Run(DenseTestRequest("libdense_segfault.so"));
  EXPECT_EQ(crashed.error_no(), Code(MeasureErrorNo::kRuntimeDevice));
  EXPECT_THAT(crashed.error_msg(), HasSubstr("killed by signal 11 (SIGSEGV)"));
  EXPECT_THAT(crashed.error_msg(), ::testing::Not(HasSubstr("sandbox")));
}

// Controls: without the sandbox the same kernels do what they try.
TEST(RunnerSandboxTest, WithTheSandboxOffTheAttacksSucceed) {
  auto runner = MakeRunner({.enabled = false});
  ExpectSuccess(runner->Run(DenseTestRequest("libsandbox_socket.so")));
  ExpectSuccess(runner->Run(DenseTestRequest("libsandbox_fork.so")));
  ExpectSuccess(runner->Run(DenseTestRequest("libsandbox_signal_parent.so")));
  const std::string path = OutsideEscapePath();
  unlink(path.c_str());
  ExpectSuccess(runner->Run(DenseTestRequest("libsandbox_write_file.so")));
  EXPECT_TRUE(Exists(path)) << path;
  unlink(path.c_str());
}

TEST(RunnerSandboxTest, NegativeLimitsAreRefusedAtCreate) {
  auto runner =
      Runner::Create(RunnerOptions{.runner_path = RunfilePath("device_agent/tunefleet_runner"),
                                   .sandbox = {.memory_limit_mb = -1}});
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(runner.status().message(), HasSubstr("sandbox limits"));
}

}  // namespace
}  // namespace tunefleet

// The runner child's sandbox, end to end: each attack kernel in testdata/
// (sandbox_*.c) goes through a real Runner and tunefleet_runner, is stopped
// and reported as a runtime error naming the cause, and the same Runner then
// measures a good kernel. Controls with the sandbox off show the attacks
// are real.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_runtime/runner.h"
#include "kernel_runtime/runner_protocol.h"
#include "kernel_runtime/test_kernels.h"
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
      Runner::Create(RunnerOptions{.runner_path = RunfilePath("kernel_runtime/tunefleet_runner"),
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

constexpr char kSecretPath[] = "/tmp/tunefleet_sandbox_secret";

void WriteSecret() {
  unlink(kSecretPath);
  const int fd = open(kSecretPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << kSecretPath;
  ASSERT_EQ(write(fd, "k", 1), 1);
  close(fd);
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

// Files the agent's user owns (keys, tokens, the store) are out of reach.
TEST(RunnerSandboxTest, ReadingTheAgentUsersFilesIsRefused) {
  WriteSecret();
  auto runner = MakeRunner();
  ExpectSuccess(runner->Run(DenseTestRequest("libsandbox_read_secret.so")));
  unlink(kSecretPath);
}

TEST(RunnerSandboxTest, TheChildGetsNoneOfTheAgentsEnvironment) {
  setenv("TUNEFLEET_SANDBOX_TEST_SECRET", "tf_123.secret", 1);
  auto runner = MakeRunner();
  proto::RunResult result = runner->Run(DenseTestRequest("libsandbox_env_secret.so"));
  unsetenv("TUNEFLEET_SANDBOX_TEST_SECRET");
  ExpectSuccess(result);
}

TEST(RunnerSandboxTest, SignallingTheAgentThroughADescriptorIsRefused) {
  auto runner = MakeRunner();
  ExpectForbiddenThenCarryOn(*runner, "libsandbox_fcntl_setown.so", "fcntl");
}

TEST(RunnerSandboxTest, MovingTheAgentToOtherCpusIsRefused) {
  auto runner = MakeRunner();
  ExpectForbiddenThenCarryOn(*runner, "libsandbox_setaffinity_other.so", "sched_setaffinity");
}

TEST(RunnerSandboxTest, TruncatingTheStatusPageOrTheLogIsRefused) {
  auto runner = MakeRunner();
  ExpectForbiddenThenCarryOn(*runner, "libsandbox_truncate_inherited.so", "ftruncate");
}

// W^X: the harness's code cannot be made writable and executable, so a
// kernel cannot patch the time evaluator in place.
TEST(RunnerSandboxTest, PatchingTheHarnessCodeIsRefused) {
  auto runner = MakeRunner();
  ExpectForbiddenThenCarryOn(*runner, "libsandbox_patch_harness.so", "mprotect");
}

// A kernel that claims a century of preparation on the status page gets
// its timeout at most twice over, not a century.
TEST(RunnerSandboxTest, ALieOnTheStatusPageCannotPostponeTheTimeout) {
  auto runner = MakeRunner();
  proto::RunRequest request = DenseTestRequest("libsandbox_lying_prepare.so");
  request.mutable_options()->set_timeout_s(1.0);
  const absl::Time start = absl::Now();
  proto::RunResult result = runner->Run(request);
  const double waited_s = absl::ToDoubleSeconds(absl::Now() - start);
  EXPECT_EQ(result.error_no(), Code(MeasureErrorNo::kRunTimeout)) << result.error_msg();
  EXPECT_LT(waited_s, 30.0) << "the kernel sleeps 60 s; the agent must not wait for it";
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
  EXPECT_EQ(runner->Run(DenseTestRequest("libsandbox_patch_harness.so")).error_no(),
            Code(MeasureErrorNo::kRuntimeDevice));  // returned 97: it could
  ExpectSuccess(runner->Run(DenseTestRequest("libsandbox_signal_parent.so")));
  const std::string path = OutsideEscapePath();
  unlink(path.c_str());
  ExpectSuccess(runner->Run(DenseTestRequest("libsandbox_write_file.so")));
  EXPECT_TRUE(Exists(path)) << path;
  unlink(path.c_str());
  WriteSecret();
  EXPECT_EQ(runner->Run(DenseTestRequest("libsandbox_read_secret.so")).error_no(),
            Code(MeasureErrorNo::kRuntimeDevice));
  unlink(kSecretPath);
  setenv("TUNEFLEET_SANDBOX_TEST_SECRET", "tf_123.secret", 1);
  runner->Recycle();  // the next child inherits the variable
  proto::RunResult found = runner->Run(DenseTestRequest("libsandbox_env_secret.so"));
  unsetenv("TUNEFLEET_SANDBOX_TEST_SECRET");
  EXPECT_NE(found.error_no(), Code(MeasureErrorNo::kNoError));
}

TEST(RunnerSandboxTest, NegativeLimitsAreRefusedAtCreate) {
  auto runner =
      Runner::Create(RunnerOptions{.runner_path = RunfilePath("kernel_runtime/tunefleet_runner"),
                                   .sandbox = {.memory_limit_mb = -1}});
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(runner.status().message(), HasSubstr("sandbox limits"));
}

}  // namespace
}  // namespace tunefleet

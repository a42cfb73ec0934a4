// Runs kernels in an isolated child process: the agent's (and the local
// tuning loop's) way to measure a built artifact without letting a crashing
// or hanging kernel take the caller down.
//
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<Runner> runner, Runner::Create({}));
//   proto::RunResult result = runner->Run(request);
//   if (result.error_no() == static_cast<int>(MeasureErrorNo::kNoError)) ...
//
// Runner starts a tunefleet_runner child with posix_spawn (cheap even from a
// large parent: no page-table copy) and keeps it across trials, so the child's
// thread pool, pinned threads and cached tensors and reference outputs
// survive from one trial to the next. Requests and results travel as
// length-prefixed protos over two pipes (runner_protocol.h).
//
// When the child dies (a kernel crashed, or its sandbox stopped it: a
// forbidden system call is named, "sandbox: forbidden system call (socket);
// ...", as is the CPU time limit) the trial is RUNTIME_DEVICE with the
// signal and what the child was doing (a GPU kernel's fault that leaves the
// CUDA context unusable comes back as the child's own result, after which
// the child exits and is reaped at once); when it overruns timeout_s the Runner
// SIGKILLs it and the trial is RUN_TIMEOUT. Either way the child is reaped at
// once and a fresh one is spawned on the next Run. A child that dies before
// it has taken a request (so no kernel of this trial ran) is replaced and the
// request resent once, transparently.
//
// The child also dies with its parent: it watches its request pipe for
// hang-up, and sets PR_SET_PDEATHSIG(SIGKILL). The latter fires when the
// *thread* that spawned the child exits, so call Run from long-lived threads
// (a thread that exits costs a respawn on the next Run, nothing worse).
#ifndef TUNEFLEET_KERNEL_RUNTIME_RUNNER_H_
#define TUNEFLEET_KERNEL_RUNTIME_RUNNER_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kernel_runtime/runner_interface.h"
#include "kernel_runtime/runner_protocol.h"
#include "proto/runner.pb.h"

namespace tunefleet {

struct RunnerOptions {
  // The tunefleet_runner binary. Empty: "tunefleet_runner" in the directory
  // of this process's executable, else $TUNEFLEET_RUNNER, else in Bazel
  // runfiles (<exe>.runfiles, $RUNFILES_DIR, $TEST_SRCDIR, under
  // tunefleet/kernel_runtime/): a binary with //kernel_runtime:tunefleet_runner
  // in its `data` finds it with no configuration.
  std::string runner_path;
  // A command prefix the child is started through, for emulated boards: an
  // AArch64 agent run under qemu-user on an x86 machine without binfmt_misc
  // cannot exec its AArch64 runner directly, so it passes
  // {"qemu-aarch64", "-L", "/"} and the child becomes
  // `qemu-aarch64 -L / <runner_path> <runner flags>` (the same pid, so
  // killing and reaping it work as usual). launcher[0] without a '/' is
  // looked up in $PATH. Empty (the default, and what a real board uses):
  // the runner is executed directly.
  std::vector<std::string> launcher;
  // Kernel threads in the child; 0 = the machine's hardware concurrency.
  int num_threads = 0;
  // Pin the child's kernel threads to CPUs (repeatable timings).
  bool pin_threads = true;
  // The CUDA device GPU artifacts run on (the child's --gpu_device).
  int gpu_device = 0;
  // The CUDA driver library the child opens for GPU artifacts (its
  // --cuda_driver); empty: libcuda.so.1. Tests point it at a fake.
  std::string cuda_driver_library;
  // The child's sandbox (sandbox.h): on by default. A child started through
  // a launcher (qemu-user) runs without one, with a warning at Create:
  // qemu-user refuses seccomp filters.
  RunnerSandboxOptions sandbox;
  // From spawning a child until it reports ready.
  double startup_timeout_s = 10.0;
  // Preparing a workload (allocating tensors and computing the naive
  // reference, once per workload and seed) is not counted against a
  // request's timeout_s, which is meant for the kernel; it gets this long.
  double prepare_timeout_s = 300.0;
};

class Runner final : public RunnerInterface {
 public:
  // Resolves the runner binary (NotFound naming every place tried) and the
  // launcher's program (NotFound), and validates the options
  // (InvalidArgument). The child starts on the first Run.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Runner>> Create(RunnerOptions options);

  // Kills and reaps the child.
  ~Runner() override;

  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Measures `request` in the child; one call at a time (concurrent calls
  // queue). Error codes, beyond those of RunnerChild::Handle (runner_child.h):
  //   RUN_TIMEOUT     no result within options.timeout_s (plus the workload's
  //                   preparation time); the child was killed;
  //   RUNTIME_DEVICE  the child died (the message names the signal or exit
  //                   status and the stage), or could not be started;
  //   UNKNOWN         timeout_s is not > 0, or the child's answer was garbage.
  // For these parent-made results run_seconds is the wall time from sending
  // the request to giving up: the time the trial cost.
  proto::RunResult Run(const proto::RunRequest& request) override;
  // Kills and reaps the live child (if any); the next Run spawns a new one.
  void Recycle() override;
  // SIGKILLs the child while a Run waits for it (see RunnerInterface).
  void Abort(const std::string& reason) override;

  // The live child's pid, if any (for tests and diagnostics).
  std::optional<pid_t> child_pid() const;
  const std::string& runner_path() const { return options_.runner_path; }
  // The launcher with its program resolved to a path; empty when none.
  const std::vector<std::string>& launcher() const { return options_.launcher; }

 private:
  struct Child {
    pid_t pid = -1;
    int request_fd = -1;                      // parent's write end, non-blocking
    int result_fd = -1;                       // parent's read end, non-blocking
    RunnerStatusPage* status_page = nullptr;  // may be null (no memfd)
    uint64_t requests_sent = 0;
  };

  explicit Runner(RunnerOptions options) : options_(std::move(options)) {}

  [[nodiscard]] absl::Status SpawnChild() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // SIGKILLs and reaps the child; returns how it ended.
  std::string KillChild() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reaps a child that closed its pipe (normally: it died), killing it if it
  // lingers; returns how it ended.
  // `wait_status` (may be null) receives the raw status, or -1 when unknown.
  std::string ReapExitingChild(int* wait_status = nullptr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReleaseChildResources() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What the child was doing, for error messages.
  std::string ChildStage() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const RunnerOptions options_;
  mutable absl::Mutex mu_;
  std::optional<Child> child_ ABSL_GUARDED_BY(mu_);
  // The child a Run is waiting on (-1: none), readable without mu_ (which
  // that Run holds), and why it was aborted ("" when it was not).
  std::atomic<pid_t> running_pid_{-1};
  absl::Mutex abort_mu_;
  std::string abort_reason_ ABSL_GUARDED_BY(abort_mu_);
};

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_RUNNER_H_

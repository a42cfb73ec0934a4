#include "kernel_runtime/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/process.h"
#include "kernel_runtime/file_confinement.h"
#include "proto_convert/run_request.h"
#include "tuner_core/measure/measure.h"

extern char** environ;

namespace tunefleet {
namespace {

constexpr char kRunnerBinaryName[] = "tunefleet_runner";
constexpr char kWorkspaceName[] = "tunefleet";
// While the child prepares a workload, how often to look at its progress.
constexpr int64_t kPreparePollNanos = 100'000'000;

// How long a child that closed its result pipe may take to exit on its own.
constexpr int64_t kExitGraceNanos = 2'000'000'000;

// A result the parent makes up because the child gave none. `elapsed_s`
// goes into run_seconds: it is what the trial cost.
proto::RunResult Failure(MeasureErrorNo error_no, std::string message, double elapsed_s = 0) {
  proto::RunResult result;
  result.set_error_no(static_cast<int>(error_no));
  result.set_error_msg(std::move(message));
  result.set_run_seconds(elapsed_s);
  return result;
}

int64_t SecondsToNanos(double seconds) {
  return static_cast<int64_t>(std::min(seconds, 1e9) * 1e9);
}

std::string DescribeWaitStatus(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return absl::StrCat("killed by signal ", sig, " (SIG", abbrev != nullptr ? abbrev : "?", ")");
  }
  if (WIFEXITED(status)) return absl::StrCat("exited with status ", WEXITSTATUS(status));
  return absl::StrCat("ended with wait status ", status);
}

// Blocking waitpid that survives signals. Returns how the child ended.
std::string WaitForExit(pid_t pid) {
  int status = 0;
  for (;;) {
    const pid_t reaped = waitpid(pid, &status, 0);
    if (reaped == pid) return DescribeWaitStatus(status);
    if (reaped < 0 && errno == EINTR) continue;
    // ECHILD: the host process ignores SIGCHLD, so the kernel reaped it.
    return absl::StrCat("ended (exit status unavailable: ", std::strerror(errno), ")");
  }
}

// "sandbox: ...; " when the child's end was its sandbox's doing, else "".
// `forbidden` is the call the SIGSYS handler recorded (may be "").
std::string SandboxCause(int wait_status, const std::string& forbidden, int64_t cpu_limit_s) {
  const bool signaled = wait_status != -1 && WIFSIGNALED(wait_status);
  if (!forbidden.empty() || (signaled && WTERMSIG(wait_status) == SIGSYS)) {
    return absl::StrCat("sandbox: forbidden system call (",
                        forbidden.empty() ? "not recorded" : forbidden, "); ");
  }
  if (signaled && WTERMSIG(wait_status) == SIGXCPU) {
    return absl::StrCat("sandbox: CPU time limit (", cpu_limit_s,
                        " s over the child's life) exceeded; ");
  }
  return "";
}

[[nodiscard]] absl::Status IsExecutableFile(const std::string& path) {
  if (path.empty()) return absl::NotFoundError("empty path");
  if (access(path.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::StatusOr<std::string> ResolveRunnerPath(const std::string& configured) {
  if (!configured.empty()) {
    if (absl::Status ok = IsExecutableFile(configured); !ok.ok()) {
      return absl::NotFoundError(
          absl::StrCat("runner binary is not an executable file: ", ok.message()));
    }
    return configured;
  }
  std::vector<std::string> tried;
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length > 0) {
    std::string dir(self, static_cast<size_t>(length));
    dir = dir.substr(0, dir.rfind('/') + 1);
    const std::string beside = absl::StrCat(dir, kRunnerBinaryName);
    absl::Status ok = IsExecutableFile(beside);
    if (ok.ok()) return beside;
    tried.push_back(std::string(ok.message()));
  }
  const char* from_env = std::getenv("TUNEFLEET_RUNNER");
  if (from_env != nullptr && *from_env != '\0') {
    absl::Status ok = IsExecutableFile(from_env);
    if (ok.ok()) return std::string(from_env);
    tried.push_back(absl::StrCat("$TUNEFLEET_RUNNER=", ok.message()));
  } else {
    tried.push_back("$TUNEFLEET_RUNNER is not set");
  }
  // Bazel runfiles, for a binary or test with //kernel_runtime:tunefleet_runner
  // in its `data`.
  std::vector<std::string> runfiles_roots;
  if (length > 0) runfiles_roots.push_back(absl::StrCat(std::string(self, length), ".runfiles"));
  for (const char* variable : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    const char* root = std::getenv(variable);
    if (root != nullptr && *root != '\0') runfiles_roots.push_back(root);
  }
  for (const std::string& root : runfiles_roots) {
    const std::string in_runfiles =
        absl::StrCat(root, "/", kWorkspaceName, "/kernel_runtime/", kRunnerBinaryName);
    absl::Status ok = IsExecutableFile(in_runfiles);
    if (ok.ok()) return in_runfiles;
    tried.push_back(std::string(ok.message()));
  }
  return absl::NotFoundError(absl::StrCat("cannot find the ", kRunnerBinaryName,
                                          " binary; tried: ", absl::StrJoin(tried, "; ")));
}

// The launcher's program as a path: as given when it names a directory,
// else the first executable of that name in $PATH.
[[nodiscard]] absl::StatusOr<std::string> ResolveLauncherProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (absl::Status ok = IsExecutableFile(program); !ok.ok()) {
      return absl::NotFoundError(
          absl::StrCat("runner launcher is not an executable file: ", ok.message()));
    }
    return program;
  }
  absl::StatusOr<std::string> found = FindOnPath(program);
  if (!found.ok())
    return absl::NotFoundError(absl::StrCat("runner launcher ", found.status().message()));
  return found;
}

// A duplicate of `fd` numbered >= 10 (close-on-exec), replacing it. Keeps
// the child's dup2 onto 3, 4 and 5 from overwriting a source still needed.
int LiftDescriptor(int fd) {
  const int lifted = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  close(fd);
  return lifted;
}

bool SetNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Runner>> Runner::Create(RunnerOptions options) {
  if (options.num_threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("runner: num_threads must be >= 0, got ", options.num_threads));
  }
  if (!(options.startup_timeout_s > 0) || !(options.prepare_timeout_s > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("runner: startup_timeout_s and prepare_timeout_s must be > 0, got ",
                     options.startup_timeout_s, " and ", options.prepare_timeout_s));
  }
  if (options.sandbox.memory_limit_mb < 0 || options.sandbox.file_size_limit_mb <= 0 ||
      options.sandbox.cpu_limit_s < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "runner: sandbox limits must be >= 0 (0 = automatic; file size > 0), got memory ",
        options.sandbox.memory_limit_mb, " MiB, file size ", options.sandbox.file_size_limit_mb,
        " MiB, CPU ", options.sandbox.cpu_limit_s, " s"));
  }
  absl::StatusOr<std::string> path = ResolveRunnerPath(options.runner_path);
  if (!path.ok()) return path.status();
  options.runner_path = *std::move(path);
  if (!options.launcher.empty() && options.sandbox.enabled) {
    TF_LOG(WARNING) << "runner: the child runs through launcher " << options.launcher.front()
                    << " without a sandbox (qemu-user refuses seccomp filters); a real board "
                       "runs it sandboxed";
    options.sandbox.enabled = false;
  }
  if (options.sandbox.enabled && options.sandbox.confine_files) {
    if (absl::Status landlock = LandlockAvailable(); !landlock.ok()) {
      if (options.sandbox.require_file_confinement) return landlock;
      TF_LOG(WARNING) << "runner: " << landlock.message()
                      << "; measuring this process's own kernels without file confinement";
      options.sandbox.confine_files = false;
    }
  }
  if (!options.launcher.empty()) {
    absl::StatusOr<std::string> program = ResolveLauncherProgram(options.launcher.front());
    if (!program.ok()) return program.status();
    options.launcher.front() = *std::move(program);
  }
  return std::unique_ptr<Runner>(new Runner(std::move(options)));
}

Runner::~Runner() {
  absl::MutexLock lock(&mu_);
  if (child_.has_value()) KillChild();
}

void Runner::Recycle() {
  absl::MutexLock lock(&mu_);
  if (child_.has_value()) KillChild();
}

void Runner::Abort(const std::string& reason) {
  absl::MutexLock lock(&abort_mu_);
  const pid_t pid = running_pid_.load(std::memory_order_acquire);
  if (pid <= 0) return;
  abort_reason_ = reason.empty() ? "no reason given" : reason;
  kill(pid, SIGKILL);
}

std::optional<pid_t> Runner::child_pid() const {
  absl::MutexLock lock(&mu_);
  if (!child_.has_value()) return std::nullopt;
  return child_->pid;
}

absl::Status Runner::SpawnChild() {
  int request_pipe[2];
  int result_pipe[2];
  if (pipe2(request_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2 failed: ", std::strerror(errno)));
  }
  if (pipe2(result_pipe, O_CLOEXEC) != 0) {
    const int error = errno;
    close(request_pipe[0]);
    close(request_pipe[1]);
    return absl::InternalError(absl::StrCat("pipe2 failed: ", std::strerror(error)));
  }
  // The status page is a nicety for error messages; run without it if the
  // memfd cannot be made.
  int status_fd = CreateRunnerStatusFd();
  RunnerStatusPage* status_page = MapRunnerStatusPage(status_fd);
  if (status_page == nullptr && status_fd >= 0) {
    close(status_fd);
    status_fd = -1;
  }
  const int child_request_fd = LiftDescriptor(request_pipe[0]);
  const int child_result_fd = LiftDescriptor(result_pipe[1]);
  const int child_status_fd = status_fd >= 0 ? LiftDescriptor(status_fd) : -1;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_request_fd, kRunnerRequestFd);
  posix_spawn_file_actions_adddup2(&actions, child_result_fd, kRunnerResultFd);
  if (child_status_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, child_status_fd, kRunnerStatusFd);
  }
  // Descriptors the agent forgot to mark close-on-exec stay out of the child.
  posix_spawn_file_actions_addclosefrom_np(&actions, kRunnerStatusFd + 1);

  // The child starts with no blocked signals and default dispositions
  // whatever this thread and process had (an ignored SIGPIPE, say).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t no_signals, all_signals;
  sigemptyset(&no_signals);
  sigfillset(&all_signals);
  posix_spawnattr_setsigmask(&attributes, &no_signals);
  posix_spawnattr_setsigdefault(&attributes, &all_signals);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  // With a launcher the child is the launcher, given the runner's command
  // line after its own arguments.
  std::vector<std::string> args = options_.launcher;
  args.insert(args.end(),
              {
                  options_.runner_path,
                  absl::StrCat("--request_fd=", kRunnerRequestFd),
                  absl::StrCat("--result_fd=", kRunnerResultFd),
                  absl::StrCat("--status_fd=", child_status_fd >= 0 ? kRunnerStatusFd : -1),
                  absl::StrCat("--parent_pid=", getpid()),
                  absl::StrCat("--num_threads=", options_.num_threads),
                  absl::StrCat("--pin_threads=", options_.pin_threads ? "true" : "false"),
                  absl::StrCat("--gpu_device=", options_.gpu_device),
              });
  if (!options_.cuda_driver_library.empty()) {
    args.push_back(absl::StrCat("--cuda_driver=", options_.cuda_driver_library));
  }
  const RunnerSandboxOptions& sandbox = options_.sandbox;
  args.push_back(absl::StrCat("--sandbox=", sandbox.enabled ? "true" : "false"));
  if (sandbox.enabled) {
    args.push_back(absl::StrCat("--memory_limit_mb=", sandbox.memory_limit_mb));
    args.push_back(absl::StrCat("--file_size_limit_mb=", sandbox.file_size_limit_mb));
    args.push_back(absl::StrCat("--cpu_limit_s=", sandbox.cpu_limit_s));
    args.push_back(absl::StrCat("--sandbox_files=", sandbox.confine_files ? "true" : "false"));
  }
  const std::string& program =
      options_.launcher.empty() ? options_.runner_path : options_.launcher.front();
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  // A sandboxed child gets none of the agent's environment (tokens or
  // paths a kernel could read there) but SandboxedChildEnvironment().
  std::vector<std::string> kept_env;
  if (sandbox.enabled) kept_env = SandboxedChildEnvironment();
  std::vector<char*> envp;
  for (std::string& entry : kept_env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int spawn_error = posix_spawn(&pid, program.c_str(), &actions, &attributes, argv.data(),
                                      sandbox.enabled ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(child_request_fd);
  close(child_result_fd);
  if (child_status_fd >= 0) close(child_status_fd);
  if (spawn_error != 0) {
    close(request_pipe[1]);
    close(result_pipe[0]);
    UnmapRunnerStatusPage(status_page);
    return absl::UnavailableError(
        absl::StrCat("posix_spawn of ", program, " failed: ", std::strerror(spawn_error)));
  }
  child_ = Child{.pid = pid,
                 .request_fd = request_pipe[1],
                 .result_fd = result_pipe[0],
                 .status_page = status_page};
  if (!SetNonBlocking(child_->request_fd) || !SetNonBlocking(child_->result_fd)) {
    const int error = errno;
    KillChild();
    return absl::InternalError(
        absl::StrCat("cannot make the runner pipes non-blocking: ", std::strerror(error)));
  }

  absl::StatusOr<std::string> hello =
      ReadExactBytes(child_->result_fd, kRunnerHello.size(),
                     SystemClock().NowNanos() + SecondsToNanos(options_.startup_timeout_s));
  if (!hello.ok()) {
    const std::string ended =
        absl::IsUnavailable(hello.status()) ? ReapExitingChild() : KillChild();
    return absl::UnavailableError(absl::StrCat(options_.runner_path, " (pid ", pid,
                                               ") did not report ready: ", hello.status().message(),
                                               "; it ", ended));
  }
  if (*hello != kRunnerHello) {
    KillChild();
    return absl::FailedPreconditionError(absl::StrCat(options_.runner_path, " is not a compatible ",
                                                      kRunnerBinaryName, ": it greeted with \"",
                                                      absl::CEscape(*hello), "\""));
  }
  return absl::OkStatus();
}

std::string Runner::ChildStage() const {
  if (!child_.has_value() || child_->status_page == nullptr) {
    return "in an unknown stage (no status page)";
  }
  return RunnerStageDescription(
      static_cast<RunnerStage>(child_->status_page->stage.load(std::memory_order_acquire)));
}

void Runner::ReleaseChildResources() {
  if (!child_.has_value()) return;
  close(child_->request_fd);
  close(child_->result_fd);
  UnmapRunnerStatusPage(child_->status_page);
  child_.reset();
}

std::string Runner::KillChild() {
  kill(child_->pid, SIGKILL);
  std::string ended = WaitForExit(child_->pid);
  ReleaseChildResources();
  return ended;
}

std::string Runner::ReapExitingChild(int* wait_status) {
  const int64_t give_up = SystemClock().NowNanos() + kExitGraceNanos;
  if (wait_status != nullptr) *wait_status = -1;
  for (;;) {
    int status = 0;
    const pid_t reaped = waitpid(child_->pid, &status, WNOHANG);
    if (reaped == child_->pid) {
      if (wait_status != nullptr) *wait_status = status;
      ReleaseChildResources();
      return DescribeWaitStatus(status);
    }
    if (reaped < 0 && errno == EINTR) continue;
    if (reaped < 0) {
      const int error = errno;
      ReleaseChildResources();
      return absl::StrCat("ended (exit status unavailable: ", std::strerror(error), ")");
    }
    if (SystemClock().NowNanos() >= give_up) {
      return absl::StrCat("closed its result pipe but did not exit, so was ", KillChild());
    }
    usleep(1000);
  }
}

proto::RunResult Runner::Run(const proto::RunRequest& request) {
  absl::MutexLock lock(&mu_);
  const MeasureOptions measure = ResolveMeasureOptions(request.options());
  if (absl::Status valid = measure.Validate(); !valid.ok()) {
    return Failure(MeasureErrorNo::kUnknown,
                   absl::StrCat("invalid measure options: ", valid.message()));
  }
  const double timeout_s = measure.timeout_s;
  // The child sleeps the cooldown after the measurement; it is not the
  // kernel's time, so it extends the deadline rather than eating into it.
  const int64_t timeout_nanos = SecondsToNanos(timeout_s + measure.cooldown_interval_s);
  const int64_t prepare_timeout_nanos = SecondsToNanos(options_.prepare_timeout_s);
  const std::string payload = request.SerializeAsString();

  // A second attempt happens only when the first child died before taking
  // the request, i.e. before any of this trial's code ran.
  for (int attempt = 1;; ++attempt) {
    const bool may_retry = attempt == 1;
    if (!child_.has_value()) {
      if (absl::Status spawned = SpawnChild(); !spawned.ok()) {
        return Failure(MeasureErrorNo::kRuntimeDevice,
                       absl::StrCat("cannot start the runner child: ", spawned.message()));
      }
    }
    const pid_t pid = child_->pid;
    const uint64_t sequence = ++child_->requests_sent;
    const int64_t sent_at = SystemClock().NowNanos();
    {
      absl::MutexLock abort_lock(&abort_mu_);
      abort_reason_.clear();
      running_pid_.store(pid, std::memory_order_release);
    }

    absl::Status written = WriteFrame(child_->request_fd, payload, sent_at + timeout_nanos);
    if (!written.ok()) {
      const std::string ended = absl::IsUnavailable(written) ? ReapExitingChild() : KillChild();
      if (may_retry) {
        TF_LOG(WARNING) << "runner: child pid=" << pid << " " << ended
                        << " before taking a request; starting a new one";
        continue;
      }
      return Failure(MeasureErrorNo::kRuntimeDevice,
                     absl::StrCat("runner child (pid ", pid, ") could not take the request (",
                                  written.message(), "); it ", ended));
    }

    // Wait for the result. The deadline is timeout_s after sending, plus the
    // time the child spent preparing the workload (published on the status
    // page; up to prepare_timeout_s), which is not the kernel's doing.
    // Only the wait for the first byte is extended: a frame is then read in
    // one go, never split across deadlines. The page is the kernel's to
    // write, so what it says is bounded: the preparation cannot have taken
    // longer than the time since sending, nor than prepare_timeout_s, and
    // it extends the deadline once.
    RunnerStatusPage* page = child_->status_page;
    int64_t deadline = sent_at + timeout_nanos;
    int64_t prepare_nanos = 0;
    bool preparation_too_slow = false;
    bool extended_once = false;
    absl::Status readable;
    for (;;) {
      readable = WaitUntilReadable(child_->result_fd, deadline);
      if (!absl::IsDeadlineExceeded(readable)) break;
      if (page == nullptr || page->requests_received.load(std::memory_order_acquire) != sequence) {
        break;
      }
      const int64_t now = SystemClock().NowNanos();
      if (static_cast<RunnerStage>(page->stage.load(std::memory_order_acquire)) ==
          RunnerStage::kPreparingWorkload) {
        preparation_too_slow = now - sent_at >= prepare_timeout_nanos;
        if (preparation_too_slow) break;
        deadline = std::min(now + kPreparePollNanos, sent_at + prepare_timeout_nanos);
        continue;
      }
      if (extended_once) break;
      extended_once = true;
      prepare_nanos = std::clamp<int64_t>(page->prepare_nanos.load(std::memory_order_acquire), 0,
                                          std::min(now - sent_at, prepare_timeout_nanos));
      const int64_t extended = sent_at + prepare_nanos + timeout_nanos;
      if (now >= extended) break;
      deadline = extended;
    }
    // Once the result starts arriving, the rest is at most a timeout away.
    absl::StatusOr<std::string> frame =
        readable.ok() ? ReadFrame(child_->result_fd, SystemClock().NowNanos() + timeout_nanos,
                                  kMaxResultFrameBytes)
                      : absl::StatusOr<std::string>(readable);
    std::string aborted;
    {
      absl::MutexLock abort_lock(&abort_mu_);
      running_pid_.store(-1, std::memory_order_release);
      aborted = std::move(abort_reason_);
      abort_reason_.clear();
    }
    if (!aborted.empty() && !frame.ok()) {
      const std::string ended = ReapExitingChild();
      return Failure(
          MeasureErrorNo::kUnknown,
          absl::StrCat("aborted: ", aborted, "; the runner child (pid ", pid, ") ", ended),
          (SystemClock().NowNanos() - sent_at) / 1e9);
    }

    if (frame.ok()) {
      proto::RunResult result;
      if (!result.ParseFromString(*frame)) {
        KillChild();
        return Failure(MeasureErrorNo::kUnknown,
                       absl::StrCat("runner child (pid ", pid, ") sent an unparsable RunResult of ",
                                    frame->size(), " bytes; killed it"));
      }
      // A child whose GPU context a kernel broke says so and exits after
      // this result; reap it now so the next Run starts a fresh one.
      if (page != nullptr && static_cast<RunnerStage>(page->stage.load(
                                 std::memory_order_acquire)) == RunnerStage::kExiting) {
        const std::string ended = ReapExitingChild();
        TF_LOG(WARNING) << "runner: child pid=" << pid << " " << ended
                        << " after its last result (a GPU fault left its CUDA context unusable, "
                           "or it spent half its CPU time limit)";
      }
      return result;
    }
    const std::string stage = ChildStage();
    // The trial's cost in time, for the caller's all_cost.
    const double elapsed_s = (SystemClock().NowNanos() - sent_at) / 1e9;
    if (absl::IsDeadlineExceeded(frame.status())) {
      KillChild();
      if (preparation_too_slow) {
        return Failure(MeasureErrorNo::kRunTimeout,
                       absl::StrFormat("the runner child (pid %d) was still preparing the "
                                       "workload's tensors and reference after "
                                       "prepare_timeout_s = %g s and was killed",
                                       pid, options_.prepare_timeout_s),
                       elapsed_s);
      }
      const std::string preparation =
          prepare_nanos >= 1'000'000
              ? absl::StrFormat(" (plus %.3f s of workload preparation, not counted)",
                                prepare_nanos / 1e9)
              : "";
      return Failure(MeasureErrorNo::kRunTimeout,
                     absl::StrFormat("no result within timeout_s = %g s%s; the runner child "
                                     "(pid %d) was %s and was killed; a new one starts on the "
                                     "next run",
                                     timeout_s, preparation, pid, stage),
                     elapsed_s);
    }
    if (absl::IsUnavailable(frame.status())) {
      const bool took_request =
          page == nullptr || page->requests_received.load(std::memory_order_acquire) >= sequence;
      // Read before reaping, which unmaps the page.
      const std::string forbidden = ReadForbiddenSyscall(page);
      const int64_t cpu_limit_s =
          page != nullptr ? page->cpu_limit_s.load(std::memory_order_acquire) : 0;
      int wait_status = -1;
      const std::string ended = ReapExitingChild(&wait_status);
      if (!took_request && may_retry) {
        TF_LOG(WARNING) << "runner: child pid=" << pid << " " << ended
                        << " before taking a request; starting a new one";
        continue;
      }
      return Failure(MeasureErrorNo::kRuntimeDevice,
                     absl::StrCat(SandboxCause(wait_status, forbidden, cpu_limit_s),
                                  "runner child (pid ", pid, ") ", ended, " while ", stage),
                     elapsed_s);
    }
    KillChild();
    return Failure(MeasureErrorNo::kRuntimeDevice,
                   absl::StrCat("reading the result from the runner child (pid ", pid,
                                ") failed: ", frame.status().message(), "; killed it"),
                   elapsed_s);
  }
}

}  // namespace tunefleet

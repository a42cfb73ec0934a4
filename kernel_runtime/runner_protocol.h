// The wire between the agent (Runner, parent side) and its measurement child
// (tunefleet_runner): framing over pipes, the start-up handshake, and a shared
// status page that says what the child is doing.
//
// Only runner.cc and runner_child.cc use this; nothing else should need it.
//
// Framing: each message is a 4-byte little-endian length followed by that
// many bytes of a serialized proto (tunefleet.proto.RunRequest parent ->
// child, RunResult child -> parent). Before its first message the child
// writes kRunnerHello, so the parent knows the binary started, is the right
// one, and is ready (its thread pool is up).
//
// Status page: one shared memory page (a memfd the parent creates and passes
// as a descriptor) where the child publishes its current stage. The child may
// die or hang at any instant; the page is how the parent can still say
// "killed by SIGSEGV while running the kernel (timing runs)" rather than
// just "the child died".
#ifndef TUNEFLEET_KERNEL_RUNTIME_RUNNER_PROTOCOL_H_
#define TUNEFLEET_KERNEL_RUNTIME_RUNNER_PROTOCOL_H_

#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {

inline constexpr absl::string_view kRunnerHello = "TFRUN001";
// Larger frames are refused: a corrupt length must not allocate gigabytes.
inline constexpr uint32_t kMaxRunnerFrameBytes = 1u << 30;
// For "no deadline" in the functions below.
inline constexpr int64_t kNoDeadline = std::numeric_limits<int64_t>::max();

// Descriptor numbers the child finds its pipes and status page on.
inline constexpr int kRunnerRequestFd = 3;
inline constexpr int kRunnerResultFd = 4;
inline constexpr int kRunnerStatusFd = 5;

// What the child is doing, in the order a request goes through.
enum class RunnerStage : uint32_t {
  kIdle = 0,               // waiting for (or reading) a request
  kPreparingWorkload = 1,  // tensors, inputs, reference (once per task)
  kLoadingKernel = 2,      // dlopen (runs the object's constructors) + dlsym
  kCheckRun = 3,           // the kernel's correctness run
  kComparing = 4,          // comparing outputs with the reference
  kTimingRuns = 5,         // the time evaluator
  kWritingResult = 6,
  // Writing its last result: a GPU fault left the CUDA context unusable, so
  // the child exits after this result and the parent reaps it.
  kExiting = 7,
  // The once-per-trial cooldown after a measurement (cooldown_interval_s).
  kCoolingDown = 8,
};

// "running the kernel (timing runs)": completes "... while <description>".
const char* RunnerStageDescription(RunnerStage stage);

// The shared page's layout. Lock-free atomics are address-free, so they
// work across processes through a MAP_SHARED mapping.
struct RunnerStatusPage {
  std::atomic<uint32_t> stage;  // a RunnerStage
  // Requests the child has read completely: tells the parent whether a
  // child that died had started on the request just sent.
  std::atomic<uint64_t> requests_received;
  // Time the current request spent in kPreparingWorkload, published when
  // that stage ends; the parent does not count it against timeout_s.
  std::atomic<int64_t> prepare_nanos;
  // Written by the sandbox's SIGSYS handler (sandbox.h) just before the
  // child dies: the name of the forbidden system call, NUL-terminated,
  // published by forbidden_syscall_set = 1. The kernel shares this page, so
  // the parent reads it as untrusted text (ReadForbiddenSyscall).
  char forbidden_syscall[32];
  std::atomic<uint32_t> forbidden_syscall_set;
  // The child's RLIMIT_CPU in seconds once it entered the sandbox, else 0.
  std::atomic<int64_t> cpu_limit_s;
};
static_assert(std::atomic<uint32_t>::is_always_lock_free &&
                  std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<int64_t>::is_always_lock_free,
              "the status page needs lock-free (address-free) atomics");

// The forbidden call's name from the page, restricted to [a-z0-9_] and 31
// characters; "" when none was recorded (or `page` is null).
std::string ReadForbiddenSyscall(const RunnerStatusPage* page);

// The runner child's sandbox (sandbox.h), as the Runner forwards it on the
// child's command line. Limits of 0 take the automatic value
// (ResolveSandboxLimits).
struct RunnerSandboxOptions {
  // Off: no filter and no limits (--sandbox=false on the agent).
  bool enabled = true;
  // RLIMIT_AS (RLIMIT_DATA for a child with the GPU open) in MiB; 0: 4096 +
  // 128 per kernel thread, room for the 256 MiB prepared-workload cache,
  // the largest workloads' tensors, and each thread's stack and malloc arena.
  int64_t memory_limit_mb = 0;
  // RLIMIT_FSIZE in MiB: bounds the memfd a kernel is written to.
  int64_t file_size_limit_mb = 256;
  // RLIMIT_CPU in seconds over the child's life; 0: 600 per kernel thread.
  // A child past half of it exits after its result and is replaced, so the
  // limit only ever stops a runaway, never an honest trial.
  int64_t cpu_limit_s = 0;
  // Confine the child's file access with Landlock (file_confinement.h): it
  // reads the system's libraries and nothing else (--sandbox_files on the
  // agent).
  bool confine_files = true;
  // On a kernel without Landlock: true (the agent, which runs strangers'
  // code) refuses at Runner::Create; false (local mode, the user's own
  // kernels) warns and measures without file confinement.
  bool require_file_confinement = false;
};

// The only environment a sandboxed child gets ("NAME=value"), from this
// process's: where its libraries are (LD_LIBRARY_PATH, a bundle's), which
// GPUs it may see (CUDA_VISIBLE_DEVICES), how much it logs
// (TUNEFLEET_LOG_LEVEL). Nothing else: no token, no path to one.
std::vector<std::string> SandboxedChildEnvironment();

// Maps the page behind `fd` (read-write, shared). nullptr on failure.
RunnerStatusPage* MapRunnerStatusPage(int fd);
void UnmapRunnerStatusPage(RunnerStatusPage* page);
// A new memfd sized for the page, close-on-exec, sealed against shrinking
// and growing (a child that could truncate it would make the agent's next
// read fault). -1 on failure.
int CreateRunnerStatusFd();

// Every deadline below is on SystemClock()'s monotonic line (NowNanos).

// Writes all of `bytes` to `fd` (blocking or not) by `deadline_nanos`.
// Never raises SIGPIPE: a closed reader is reported as Unavailable.
// DeadlineExceeded when the deadline passes, Internal on other I/O errors.
[[nodiscard]] absl::Status WriteAllBytes(int fd, absl::string_view bytes, int64_t deadline_nanos);
// Reads exactly `size` bytes. Unavailable when the writer closed (EOF)
// first, DeadlineExceeded, Internal.
[[nodiscard]] absl::StatusOr<std::string> ReadExactBytes(int fd, size_t size,
                                                         int64_t deadline_nanos);

// Waits until `fd` has data to read or its writer has closed (the next read
// tells which). DeadlineExceeded when the deadline passes first.
[[nodiscard]] absl::Status WaitUntilReadable(int fd, int64_t deadline_nanos);

// The largest result frame the agent reads from a child: a RunResult is at
// most kMaxRepeat costs and a message, far below this; a child (a kernel
// owns it) that announces more is refused before anything is allocated.
inline constexpr uint32_t kMaxResultFrameBytes = 1u << 20;

// One length-prefixed frame each way. ReadFrame adds DataLoss for a length
// above `max_bytes` (requests carry artifacts: kMaxRunnerFrameBytes;
// results: kMaxResultFrameBytes).
[[nodiscard]] absl::Status WriteFrame(int fd, absl::string_view payload, int64_t deadline_nanos);
[[nodiscard]] absl::StatusOr<std::string> ReadFrame(int fd, int64_t deadline_nanos,
                                                    uint32_t max_bytes = kMaxRunnerFrameBytes);

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_RUNNER_PROTOCOL_H_

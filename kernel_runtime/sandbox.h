// The runner child's sandbox: resource limits and a seccomp system call
// filter that a measurement child (runner_main.cc) enters once its thread
// pool exists and before it loads any artifact, so that a kernel it runs
// cannot open sockets, start or trace processes, signal processes other than
// its own, write to the file system, or load kernel code; and cannot take
// more than its share of memory or CPU time.
//
//   RunnerStatusPage* page = MapRunnerStatusPage(fd);
//   if (absl::Status entered = EnterSandbox(limits, page, {}); !entered.ok()) ...
//   // from here on every thread of the process is filtered
//
// What is refused and how: the filter (SCMP_ACT_TRAP) raises SIGSYS on a
// forbidden call; the handler writes the call's name to the status page
// (RunnerStatusPage::forbidden_syscall) and to stderr, and the process then
// dies by SIGSYS, which the Runner reports as the trial's runtime error. A
// kernel cannot install its own SIGSYS handler (rt_sigaction(SIGSYS) is
// itself forbidden); blocking SIGSYS only makes the kernel kill the process
// straight away.
//
// A CPU child's filter is an allow-list (SandboxAllowedSyscalls(), plus
// calls allowed only for some arguments: read-only opens, clone of threads,
// signals and rt_sigaction for this process's own use, sched_setaffinity of
// the calling thread, fcntl commands that reach no other process, this
// process's limits, thread names; mmap and mprotect under W^X: no mapping
// both writable and executable, no page made executable afterwards, so the
// harness's code cannot be patched in place). Everything else traps: sockets, new processes,
// tracing, writes to the file system by path or to inherited descriptors
// (ftruncate), signals through F_SETOWN/F_SETSIG, another process's CPUs.
// Files are confined separately, by Landlock (file_confinement.h): the
// child can read the system's libraries and nothing of the daemons'.
//
// A GPU child keeps a deny-list (default allow) with the same argument
// checks: the CUDA driver's calls after warm-up (ioctl, mmap, its own
// threads) change with every release and have not been enumerated on a GPU
// host, so an allow-list there is left undone.
//
// GPU: the CUDA driver opens /dev/nvidia* read-write, which the filter
// forbids; a child that will use the GPU opens the driver and its context
// before entering (RunnerChild::OpenGpuBeforeSandbox, which also runs one
// warm-up kernel through load, copies, events and launch, since the driver
// maps some memory only on first use), and then gets
// RLIMIT_DATA instead of RLIMIT_AS, since CUDA reserves address space for
// unified addressing far beyond any sensible limit.
#ifndef TUNEFLEET_KERNEL_RUNTIME_SANDBOX_H_
#define TUNEFLEET_KERNEL_RUNTIME_SANDBOX_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "kernel_runtime/runner_protocol.h"

namespace tunefleet {

// The limits as resolved for one child (RunnerSandboxOptions with its
// automatic values filled in).
struct SandboxLimits {
  int64_t memory_limit_bytes = 0;     // RLIMIT_AS, or RLIMIT_DATA with the GPU open
  int64_t file_size_limit_bytes = 0;  // RLIMIT_FSIZE (memfd writes count too)
  int64_t cpu_limit_s = 0;            // RLIMIT_CPU: SIGXCPU, then SIGKILL 1 s later
};

// Fills in RunnerSandboxOptions' automatic values for a child with
// `kernel_threads` threads: memory 4 GiB + 128 MiB per thread (its stack and
// malloc arena reservations), CPU 600 s per thread.
SandboxLimits ResolveSandboxLimits(const RunnerSandboxOptions& options, int kernel_threads);

struct SandboxContext {
  // The CUDA driver is already open in this process: limit RLIMIT_DATA
  // rather than RLIMIT_AS.
  bool gpu_open = false;
};

// Sets the limits (soft = hard, so the kernel cannot raise them; plus
// RLIMIT_CORE 0, so no signal leaves a core file behind), ignores SIGXFSZ
// (a write over the size limit fails with EFBIG instead of killing), installs
// the SIGSYS reporter and loads the filter into every thread of the process.
// `page` (may be null) receives the name of a forbidden call. Irreversible.
// FailedPrecondition when a limit or the filter cannot be applied (e.g. a
// kernel without seccomp, or qemu-user, which refuses filters), naming the
// step; the caller must then not run kernels.
[[nodiscard]] absl::Status EnterSandbox(const SandboxLimits& limits, RunnerStatusPage* page,
                                        const SandboxContext& context);

// The calls a CPU child's filter allows whatever their arguments (others,
// such as openat, clone, kill and fcntl, only for some; see sandbox.cc).
const std::vector<const char*>& SandboxAllowedSyscalls();

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_SANDBOX_H_

#include "device_agent/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// Refused whatever their arguments. Grouped by what they would let a kernel
// do; names unknown on this architecture (e.g. "open" on AArch64) are
// skipped.
const char* const kDeniedSyscalls[] = {
    // The network, and sockets reached any other way.
    "socket", "socketpair", "socketcall", "connect", "bind", "listen", "accept", "accept4",
    // New processes and programs. clone without CLONE_THREAD and clone3 are
    // handled below.
    "fork", "vfork", "execve", "execveat",
    // Other processes: tracing, their memory, their descriptors, signals
    // (kill, tgkill and friends are limited to this process below).
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp", "pidfd_open",
    "pidfd_getfd", "pidfd_send_signal", "tkill",
    // Changing the file system by path. Opens for writing are handled below.
    "creat", "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
    "mknod", "mknodat", "link", "linkat", "symlink", "symlinkat", "chmod", "fchmodat", "chown",
    "lchown", "fchownat", "truncate", "utime", "utimes", "utimensat", "futimesat", "setxattr",
    "lsetxattr", "removexattr", "lremovexattr", "acct", "swapon", "swapoff", "quotactl",
    // Ways to open files that bypass the open filter: by handle, through
    // io_uring (its opens are not system calls), openat2 (flags in a struct).
    "name_to_handle_at", "open_by_handle_at", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "openat2",
    // Mounts, namespaces, the kernel itself.
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "bpf", "perf_event_open",
    "userfaultfd", "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "reboot", "syslog", "keyctl", "add_key", "request_key", "iopl", "ioperm", "settimeofday",
    "clock_settime", "clock_adjtime", "adjtimex", "fanotify_init", "lookup_dcookie", "uselib",
    "nfsservctl", "vhangup"};

const std::vector<const char*>& DeniedList() {
  static const auto* list =
      new std::vector<const char*>(std::begin(kDeniedSyscalls), std::end(kDeniedSyscalls));
  return *list;
}

// Names of the calls with a rule, by number, filled before the filter is
// loaded and read only by the SIGSYS handler (no allocation there).
struct NamedSyscall {
  int number;
  const char* name;
};
NamedSyscall g_named[160];
int g_named_count = 0;
RunnerStatusPage* g_page = nullptr;

void Remember(int number, const char* name) {
  if (g_named_count < static_cast<int>(std::size(g_named)))
    g_named[g_named_count++] = {number, name};
}

const char* NameOf(int number) {
  for (int i = 0; i < g_named_count; ++i) {
    if (g_named[i].number == number) return g_named[i].name;
  }
  return "unknown";
}

void WriteStderr(const char* text) {
  const ssize_t ignored = write(STDERR_FILENO, text, strlen(text));
  (void)ignored;
}

// Async-signal-safe: records the call, then dies by SIGSYS. The handler runs
// with SIGSYS blocked, and a forbidden call made while SIGSYS is blocked
// makes the kernel reset it to the default action and kill the process
// (force_sig_seccomp); socket() is forbidden whatever its arguments.
void OnForbiddenSyscall(int, siginfo_t* info, void*) {
  const char* name = NameOf(info->si_syscall);
  if (g_page != nullptr) {
    uint32_t expected = 0;
    // First writer wins (other threads may trap at the same time).
    if (g_page->forbidden_syscall_set.compare_exchange_strong(expected, 2)) {
      const size_t length = std::min(strlen(name), sizeof(g_page->forbidden_syscall) - 1);
      memcpy(g_page->forbidden_syscall, name, length);
      g_page->forbidden_syscall[length] = '\0';
      g_page->forbidden_syscall_set.store(1, std::memory_order_release);
    }
  }
  WriteStderr("tunefleet_runner: sandbox: forbidden system call ");
  WriteStderr(name);
  WriteStderr("; stopping\n");
  syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0);
  _exit(128 + SIGSYS);  // not reached
}

// One rule, remembered by name for the handler. A name this architecture
// does not have is skipped (libseccomp resolves it to a negative number).
[[nodiscard]] absl::Status AddRule(scmp_filter_ctx filter, uint32_t action, const char* name,
                                   std::initializer_list<scmp_arg_cmp> args = {}) {
  const int number = seccomp_syscall_resolve_name(name);
  if (number < 0) return absl::OkStatus();
  const int rc = seccomp_rule_add_array(filter, action, number, args.size(), args.begin());
  if (rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("sandbox: adding the seccomp rule for ", name, " failed: ", strerror(-rc)));
  }
  if (action == SCMP_ACT_TRAP && strcmp(NameOf(number), "unknown") == 0) Remember(number, name);
  return absl::OkStatus();
}

[[nodiscard]] absl::Status AddRules(scmp_filter_ctx filter) {
  for (const char* name : kDeniedSyscalls) {
    if (absl::Status added = AddRule(filter, SCMP_ACT_TRAP, name); !added.ok()) return added;
  }
  const pid_t self = getpid();
  // Each rule below matches the forbidden case; rules on one call are OR'ed.
  const struct {
    const char* name;
    scmp_arg_cmp arg;
  } conditional[] = {
      // Opens that could write, create or truncate (flags: arg 1 of open,
      // arg 2 of openat). Reading stays allowed: dlopen needs it.
      {"open", SCMP_A1(SCMP_CMP_MASKED_EQ, O_WRONLY, O_WRONLY)},
      {"open", SCMP_A1(SCMP_CMP_MASKED_EQ, O_RDWR, O_RDWR)},
      {"open", SCMP_A1(SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT)},
      {"open", SCMP_A1(SCMP_CMP_MASKED_EQ, O_TRUNC, O_TRUNC)},
      {"open", SCMP_A1(SCMP_CMP_MASKED_EQ, O_APPEND, O_APPEND)},
      {"openat", SCMP_A2(SCMP_CMP_MASKED_EQ, O_WRONLY, O_WRONLY)},
      {"openat", SCMP_A2(SCMP_CMP_MASKED_EQ, O_RDWR, O_RDWR)},
      {"openat", SCMP_A2(SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT)},
      {"openat", SCMP_A2(SCMP_CMP_MASKED_EQ, O_TRUNC, O_TRUNC)},
      {"openat", SCMP_A2(SCMP_CMP_MASKED_EQ, O_APPEND, O_APPEND)},
      // Threads only: a clone without CLONE_THREAD is a new process.
      {"clone", SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)},
      // Signals to this process only: kill(0) and kill(-1) would reach the
      // agent's process group and every process of this user.
      {"kill", SCMP_A0(SCMP_CMP_NE, static_cast<scmp_datum_t>(self))},
      {"tgkill", SCMP_A0(SCMP_CMP_NE, static_cast<scmp_datum_t>(self))},
      {"rt_sigqueueinfo", SCMP_A0(SCMP_CMP_NE, static_cast<scmp_datum_t>(self))},
      {"rt_tgsigqueueinfo", SCMP_A0(SCMP_CMP_NE, static_cast<scmp_datum_t>(self))},
      // Limits of other processes (glibc's setrlimit passes pid 0).
      {"prlimit64", SCMP_A0(SCMP_CMP_NE, 0)},
      // Typing into the controlling terminal.
      {"ioctl", SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI)},
  };
  for (const auto& rule : conditional) {
    if (absl::Status added = AddRule(filter, SCMP_ACT_TRAP, rule.name, {rule.arg}); !added.ok()) {
      return added;
    }
  }
  // The SIGSYS reporter stays: no new handler, default or ignore for SIGSYS.
  if (absl::Status added = AddRule(filter, SCMP_ACT_TRAP, "rt_sigaction",
                                   {SCMP_A0(SCMP_CMP_EQ, SIGSYS), SCMP_A1(SCMP_CMP_NE, 0)});
      !added.ok()) {
    return added;
  }
  // clone3 passes its flags in a struct the filter cannot read; ENOSYS makes
  // glibc's pthread_create fall back to clone, whose flags it can.
  return AddRule(filter, SCMP_ACT_ERRNO(ENOSYS), "clone3");
}

[[nodiscard]] absl::Status SetLimit(int resource, const char* name, int64_t value) {
  const rlim_t limit = value > 0 ? static_cast<rlim_t>(value) : 0;
  struct rlimit current;
  if (getrlimit(resource, &current) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("sandbox: getrlimit(", name, ") failed: ", strerror(errno)));
  }
  // Never above what this process already may not exceed.
  const rlim_t capped =
      current.rlim_max == RLIM_INFINITY ? limit : std::min(limit, current.rlim_max);
  const struct rlimit wanted = {capped, capped};
  if (setrlimit(resource, &wanted) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("sandbox: setrlimit(", name, ", ", capped, ") failed: ", strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

SandboxLimits ResolveSandboxLimits(const RunnerSandboxOptions& options, int kernel_threads) {
  const int64_t threads = std::max(kernel_threads, 1);
  return SandboxLimits{
      .memory_limit_bytes =
          (options.memory_limit_mb > 0 ? options.memory_limit_mb : 4096 + 128 * threads) * kMiB,
      .file_size_limit_bytes = options.file_size_limit_mb * kMiB,
      .cpu_limit_s = options.cpu_limit_s > 0 ? options.cpu_limit_s : 600 * threads,
  };
}

const std::vector<const char*>& SandboxDeniedSyscalls() { return DeniedList(); }

[[nodiscard]] absl::Status EnterSandbox(const SandboxLimits& limits, RunnerStatusPage* page,
                                        const SandboxContext& context) {
  if (limits.memory_limit_bytes <= 0 || limits.file_size_limit_bytes <= 0 ||
      limits.cpu_limit_s <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sandbox: limits must be > 0, got memory ", limits.memory_limit_bytes, " bytes, file size ",
        limits.file_size_limit_bytes, " bytes, CPU ", limits.cpu_limit_s, " s"));
  }
  absl::Status limited = SetLimit(RLIMIT_CORE, "RLIMIT_CORE", 0);
  if (limited.ok()) {
    limited = context.gpu_open ? SetLimit(RLIMIT_DATA, "RLIMIT_DATA", limits.memory_limit_bytes)
                               : SetLimit(RLIMIT_AS, "RLIMIT_AS", limits.memory_limit_bytes);
  }
  if (limited.ok()) limited = SetLimit(RLIMIT_FSIZE, "RLIMIT_FSIZE", limits.file_size_limit_bytes);
  if (!limited.ok()) return limited;
  // The hard CPU limit (SIGKILL) a second after the soft one (SIGXCPU), so
  // the Runner usually sees SIGXCPU and can name the cause.
  struct rlimit cpu = {static_cast<rlim_t>(limits.cpu_limit_s),
                       static_cast<rlim_t>(limits.cpu_limit_s + 1)};
  if (setrlimit(RLIMIT_CPU, &cpu) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("sandbox: setrlimit(RLIMIT_CPU) failed: ", strerror(errno)));
  }
  signal(SIGXFSZ, SIG_IGN);

  g_page = page;
  struct sigaction reporter;
  memset(&reporter, 0, sizeof(reporter));
  reporter.sa_sigaction = OnForbiddenSyscall;
  reporter.sa_flags = SA_SIGINFO;
  sigemptyset(&reporter.sa_mask);
  if (sigaction(SIGSYS, &reporter, nullptr) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("sandbox: installing the SIGSYS handler failed: ", strerror(errno)));
  }

  scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
  if (filter == nullptr) return absl::FailedPreconditionError("sandbox: seccomp_init failed");
  // Every thread: the pool's threads run kernel code too.
  int rc = seccomp_attr_set(filter, SCMP_FLTATR_CTL_TSYNC, 1);
  absl::Status added = rc == 0 ? AddRules(filter) : absl::OkStatus();
  if (rc == 0 && added.ok()) rc = seccomp_load(filter);
  seccomp_release(filter);
  if (!added.ok()) return added;
  if (rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("sandbox: loading the seccomp filter failed: ", strerror(-rc),
                     " (a kernel without seccomp, or qemu-user, cannot sandbox the runner; "
                     "--sandbox=false runs it unsandboxed)"));
  }
  if (page != nullptr) page->cpu_limit_s.store(limits.cpu_limit_s, std::memory_order_release);
  return absl::OkStatus();
}

}  // namespace tunefleet

#include "kernel_runtime/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// A CPU child's filter allows only these calls (and those with argument
// checks in AddAllowRules); everything else traps. What a measured kernel,
// its thread pool and the runner's own serving loop need once the sandbox
// is entered: memory, threads, futexes, time, pipes and memfds (kernels
// arrive in them), read-only opens (Landlock narrows where), signals to
// itself. Names unknown on this architecture are skipped.
const char* const kAllowedSyscalls[] = {
    // Descriptors the child already holds: its pipes, memfds, the status page.
    "read", "write", "readv", "writev", "pread64", "close", "lseek", "fstat", "newfstatat",
    "fstatat64", "statx", "poll", "ppoll", "ppoll_time64", "memfd_create", "readlink", "readlinkat",
    "access", "faccessat", "faccessat2", "getcwd",
    // Memory (mmap and mprotect are checked below).
    "munmap", "mremap", "madvise", "brk", "membarrier",
    // Threads and their synchronisation (clone is checked below).
    "futex", "futex_time64", "futex_waitv", "set_robust_list", "rseq", "set_tid_address",
    "sched_yield", "sched_getaffinity", "getcpu", "exit", "exit_group", "restart_syscall",
    // Time and identity.
    "nanosleep", "clock_nanosleep", "clock_nanosleep_time64", "clock_gettime", "clock_gettime64",
    "clock_getres", "gettimeofday", "getpid", "gettid", "getppid", "getuid", "geteuid", "getgid",
    "getegid", "uname", "getrusage", "sysinfo", "getrandom",
    // Signals (sending and handlers are checked below).
    "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "sigaltstack"};

// What a GPU child's filter refuses outright: the CUDA driver needs ioctl,
// mmap, threads and more after warm-up and changes with every release, and
// its calls have not been enumerated on a GPU host, so a GPU child keeps a
// deny-list (plus the argument checks of AddArgumentDenyRules).
const char* const kGpuDeniedSyscalls[] = {"socket",
                                          "socketpair",
                                          "socketcall",
                                          "connect",
                                          "bind",
                                          "listen",
                                          "accept",
                                          "accept4",
                                          "fork",
                                          "vfork",
                                          "execve",
                                          "execveat",
                                          "ptrace",
                                          "process_vm_readv",
                                          "process_vm_writev",
                                          "process_madvise",
                                          "kcmp",
                                          "pidfd_open",
                                          "pidfd_getfd",
                                          "pidfd_send_signal",
                                          "tkill",
                                          "creat",
                                          "unlink",
                                          "unlinkat",
                                          "rename",
                                          "renameat",
                                          "renameat2",
                                          "mkdir",
                                          "mkdirat",
                                          "rmdir",
                                          "mknod",
                                          "mknodat",
                                          "link",
                                          "linkat",
                                          "symlink",
                                          "symlinkat",
                                          "chmod",
                                          "fchmod",
                                          "fchmodat",
                                          "chown",
                                          "fchown",
                                          "lchown",
                                          "fchownat",
                                          "truncate",
                                          "ftruncate",
                                          "utime",
                                          "utimes",
                                          "utimensat",
                                          "futimesat",
                                          "setxattr",
                                          "lsetxattr",
                                          "fsetxattr",
                                          "removexattr",
                                          "lremovexattr",
                                          "fremovexattr",
                                          "acct",
                                          "swapon",
                                          "swapoff",
                                          "quotactl",
                                          "name_to_handle_at",
                                          "open_by_handle_at",
                                          "io_uring_setup",
                                          "io_uring_enter",
                                          "io_uring_register",
                                          "openat2",
                                          "mount",
                                          "umount2",
                                          "pivot_root",
                                          "chroot",
                                          "unshare",
                                          "setns",
                                          "open_tree",
                                          "move_mount",
                                          "fsopen",
                                          "fsconfig",
                                          "fsmount",
                                          "fspick",
                                          "mount_setattr",
                                          "bpf",
                                          "perf_event_open",
                                          "userfaultfd",
                                          "init_module",
                                          "finit_module",
                                          "delete_module",
                                          "kexec_load",
                                          "kexec_file_load",
                                          "reboot",
                                          "syslog",
                                          "keyctl",
                                          "add_key",
                                          "request_key",
                                          "iopl",
                                          "ioperm",
                                          "settimeofday",
                                          "clock_settime",
                                          "clock_adjtime",
                                          "adjtimex",
                                          "fanotify_init",
                                          "lookup_dcookie",
                                          "uselib",
                                          "nfsservctl",
                                          "vhangup",
                                          "landlock_create_ruleset",
                                          "landlock_add_rule",
                                          "landlock_restrict_self",
                                          "seccomp"};

// Flags of an open that could write, create or truncate.
constexpr scmp_datum_t kWritingOpenFlags = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;

// The fcntl commands a run needs: none of them reach another process
// (F_SETOWN, F_SETSIG and O_ASYNC through F_SETFL could signal one).
constexpr int kAllowedFcntl[] = {F_GETFD, F_SETFD, F_GETFL, F_DUPFD_CLOEXEC, F_GET_SEALS};

// Every call's name by number, filled before the filter is loaded and read
// only by the SIGSYS handler (no allocation there).
constexpr int kMaxSyscallNumber = 512;
char g_names[kMaxSyscallNumber][24];
RunnerStatusPage* g_page = nullptr;

void FillNames() {
  for (int number = 0; number < kMaxSyscallNumber; ++number) {
    char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, number);
    const char* text = name != nullptr ? name : "unknown";
    const size_t length = std::min(strlen(text), sizeof(g_names[number]) - 1);
    memcpy(g_names[number], text, length);
    g_names[number][length] = '\0';
    free(name);
  }
}

const char* NameOf(int number) {
  return number >= 0 && number < kMaxSyscallNumber && g_names[number][0] != '\0' ? g_names[number]
                                                                                 : "unknown";
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

struct ArgRule {
  const char* name;
  std::vector<scmp_arg_cmp> args;  // all must hold
};

// Rules with one action. A name this architecture does not have is skipped
// (libseccomp resolves it to a negative number).
[[nodiscard]] absl::Status AddRules(scmp_filter_ctx filter, uint32_t action,
                                    const std::vector<ArgRule>& rules) {
  for (const ArgRule& rule : rules) {
    const int number = seccomp_syscall_resolve_name(rule.name);
    if (number < 0) continue;
    const int rc =
        seccomp_rule_add_array(filter, action, number, rule.args.size(), rule.args.data());
    if (rc != 0) {
      return absl::FailedPreconditionError(absl::StrCat("sandbox: adding the seccomp rule for ",
                                                        rule.name, " failed: ", strerror(-rc)));
    }
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status AddRule(scmp_filter_ctx filter, uint32_t action, const char* name) {
  return AddRules(filter, action, {{name, {}}});
}

// The allow-list filter of a CPU child (default action: trap).
[[nodiscard]] absl::Status AddAllowRules(scmp_filter_ctx filter) {
  for (const char* name : kAllowedSyscalls) {
    if (absl::Status added = AddRule(filter, SCMP_ACT_ALLOW, name); !added.ok()) return added;
  }
  const auto self = static_cast<scmp_datum_t>(getpid());
  std::vector<ArgRule> allowed = {
      // W^X: no mapping both writable and executable, and no page made
      // executable after the fact, so the harness's code cannot be patched
      // in place (a kernel's own object is mapped read+exec by dlopen).
      {"mmap", {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, 0)}},
      {"mmap", {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_WRITE)}},
      {"mmap", {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_EXEC)}},
      {"mmap2", {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, 0)}},
      {"mmap2", {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_WRITE)}},
      {"mmap2", {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, PROT_EXEC)}},
      {"mprotect", {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)}},
      // Reading only (Landlock narrows what may be read).
      {"open", {SCMP_A1(SCMP_CMP_MASKED_EQ, kWritingOpenFlags, 0)}},
      {"openat", {SCMP_A2(SCMP_CMP_MASKED_EQ, kWritingOpenFlags, 0)}},
      // Threads only: a clone without CLONE_THREAD is a new process.
      {"clone", {SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD)}},
      // Signals to this process only (abort() and raise() use tgkill).
      {"kill", {SCMP_A0(SCMP_CMP_EQ, self)}},
      {"tgkill", {SCMP_A0(SCMP_CMP_EQ, self)}},
      {"rt_sigqueueinfo", {SCMP_A0(SCMP_CMP_EQ, self)}},
      {"rt_tgsigqueueinfo", {SCMP_A0(SCMP_CMP_EQ, self)}},
      // Handlers for anything but SIGSYS, and reading any (the reporter stays).
      {"rt_sigaction", {SCMP_A0(SCMP_CMP_NE, SIGSYS)}},
      {"rt_sigaction", {SCMP_A1(SCMP_CMP_EQ, 0)}},
      // The calling thread's CPUs only: another process's would skew its
      // timings.
      {"sched_setaffinity", {SCMP_A0(SCMP_CMP_EQ, 0)}},
      // This process's limits (raising one is refused anyway: soft = hard).
      {"prlimit64", {SCMP_A0(SCMP_CMP_EQ, 0)}},
      // Thread names.
      {"prctl", {SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME)}},
      {"prctl", {SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME)}},
  };
  for (const int command : kAllowedFcntl) {
    allowed.push_back({"fcntl", {SCMP_A1(SCMP_CMP_EQ, static_cast<scmp_datum_t>(command))}});
  }
  if (absl::Status added = AddRules(filter, SCMP_ACT_ALLOW, allowed); !added.ok()) return added;
  // clone3 passes its flags in a struct the filter cannot read; ENOSYS makes
  // glibc's pthread_create fall back to clone, whose flags it can.
  return AddRule(filter, SCMP_ACT_ERRNO(ENOSYS), "clone3");
}

// The deny-list filter of a GPU child (default action: allow).
[[nodiscard]] absl::Status AddDenyRules(scmp_filter_ctx filter) {
  for (const char* name : kGpuDeniedSyscalls) {
    if (absl::Status added = AddRule(filter, SCMP_ACT_TRAP, name); !added.ok()) return added;
  }
  const auto self = static_cast<scmp_datum_t>(getpid());
  std::vector<ArgRule> denied = {
      {"open", {SCMP_A1(SCMP_CMP_MASKED_EQ, O_WRONLY, O_WRONLY)}},
      {"open", {SCMP_A1(SCMP_CMP_MASKED_EQ, O_RDWR, O_RDWR)}},
      {"open", {SCMP_A1(SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT)}},
      {"open", {SCMP_A1(SCMP_CMP_MASKED_EQ, O_TRUNC, O_TRUNC)}},
      {"open", {SCMP_A1(SCMP_CMP_MASKED_EQ, O_APPEND, O_APPEND)}},
      {"openat", {SCMP_A2(SCMP_CMP_MASKED_EQ, O_WRONLY, O_WRONLY)}},
      {"openat", {SCMP_A2(SCMP_CMP_MASKED_EQ, O_RDWR, O_RDWR)}},
      {"openat", {SCMP_A2(SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT)}},
      {"openat", {SCMP_A2(SCMP_CMP_MASKED_EQ, O_TRUNC, O_TRUNC)}},
      {"openat", {SCMP_A2(SCMP_CMP_MASKED_EQ, O_APPEND, O_APPEND)}},
      {"clone", {SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)}},
      {"kill", {SCMP_A0(SCMP_CMP_NE, self)}},
      {"tgkill", {SCMP_A0(SCMP_CMP_NE, self)}},
      {"rt_sigqueueinfo", {SCMP_A0(SCMP_CMP_NE, self)}},
      {"rt_tgsigqueueinfo", {SCMP_A0(SCMP_CMP_NE, self)}},
      {"prlimit64", {SCMP_A0(SCMP_CMP_NE, 0)}},
      {"ioctl", {SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI)}},
      {"rt_sigaction", {SCMP_A0(SCMP_CMP_EQ, SIGSYS), SCMP_A1(SCMP_CMP_NE, 0)}},
      {"sched_setaffinity", {SCMP_A0(SCMP_CMP_NE, 0)}},
      {"fcntl", {SCMP_A1(SCMP_CMP_EQ, F_SETOWN)}},
      {"fcntl", {SCMP_A1(SCMP_CMP_EQ, F_SETOWN_EX)}},
      {"fcntl", {SCMP_A1(SCMP_CMP_EQ, F_SETSIG)}},
      {"fcntl", {SCMP_A1(SCMP_CMP_EQ, F_SETFL), SCMP_A2(SCMP_CMP_MASKED_EQ, O_ASYNC, O_ASYNC)}},
      {"fcntl", {SCMP_A1(SCMP_CMP_EQ, F_SETLEASE)}},
      {"fcntl", {SCMP_A1(SCMP_CMP_EQ, F_NOTIFY)}},
  };
  if (absl::Status added = AddRules(filter, SCMP_ACT_TRAP, denied); !added.ok()) return added;
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

const std::vector<const char*>& SandboxAllowedSyscalls() {
  static const auto* list =
      new std::vector<const char*>(std::begin(kAllowedSyscalls), std::end(kAllowedSyscalls));
  return *list;
}

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

  FillNames();
  scmp_filter_ctx filter = seccomp_init(context.gpu_open ? SCMP_ACT_ALLOW : SCMP_ACT_TRAP);
  if (filter == nullptr) return absl::FailedPreconditionError("sandbox: seccomp_init failed");
  // Every thread: the pool's threads run kernel code too.
  int rc = seccomp_attr_set(filter, SCMP_FLTATR_CTL_TSYNC, 1);
  absl::Status added = absl::OkStatus();
  if (rc == 0) added = context.gpu_open ? AddDenyRules(filter) : AddAllowRules(filter);
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

// EnterSandbox in a forked copy of the test process: what it refuses (the
// process dies by SIGSYS and the page names the call), what it still allows
// (what a kernel run needs), and the limits it sets.
#include "kernel_runtime/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel_runtime/kernel_loader.h"
#include "kernel_runtime/runner_protocol.h"
#include "kernel_runtime/test_kernels.h"

namespace tunefleet {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr SandboxLimits kLimits = {
    .memory_limit_bytes = 4096 * kMiB, .file_size_limit_bytes = 1 * kMiB, .cpu_limit_s = 60};

struct ChildEnd {
  int wait_status = 0;
  std::string forbidden;  // from the status page
  bool KilledBy(int sig) const { return WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == sig; }
  int ExitCode() const { return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1; }
};

// Forks; the child enters the sandbox and runs `body`, exiting with what it
// returns (100 + n: EnterSandbox failed).
ChildEnd RunSandboxed(const std::function<int()>& body, const SandboxLimits& limits = kLimits) {
  void* shared = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(shared, MAP_FAILED);
  auto* page = static_cast<RunnerStatusPage*>(shared);
  const pid_t pid = fork();
  if (pid == 0) {
    absl::Status entered = EnterSandbox(limits, page, {});
    if (!entered.ok()) {
      fprintf(stderr, "%s\n", std::string(entered.message()).c_str());
      _exit(100);
    }
    _exit(body());
  }
  ChildEnd end;
  EXPECT_EQ(waitpid(pid, &end.wait_status, 0), pid);
  end.forbidden = ReadForbiddenSyscall(page);
  munmap(shared, 4096);
  return end;
}

void ExpectForbidden(const std::function<int()>& body, const std::string& syscall) {
  ChildEnd end = RunSandboxed(body);
  EXPECT_TRUE(end.KilledBy(SIGSYS))
      << "wait status " << end.wait_status << " exit code " << end.ExitCode() << " for " << syscall;
  EXPECT_EQ(end.forbidden, syscall);
}

TEST(SandboxTest, AutomaticLimitsScaleWithThreads) {
  SandboxLimits limits = ResolveSandboxLimits({}, 4);
  EXPECT_EQ(limits.memory_limit_bytes, (4096 + 4 * 128) * kMiB);
  EXPECT_EQ(limits.file_size_limit_bytes, 256 * kMiB);
  EXPECT_EQ(limits.cpu_limit_s, 2400);
  limits = ResolveSandboxLimits({.memory_limit_mb = 700, .cpu_limit_s = 5}, 4);
  EXPECT_EQ(limits.memory_limit_bytes, 700 * kMiB);
  EXPECT_EQ(limits.cpu_limit_s, 5);
}

TEST(SandboxTest, RefusesSockets) {
  ExpectForbidden([] { return socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 1; }, "socket");
  ExpectForbidden(
      [] {
        int fds[2];
        return socketpair(AF_UNIX, SOCK_STREAM, 0, fds);
      },
      "socketpair");
}

TEST(SandboxTest, RefusesNewProcessesAndPrograms) {
  ExpectForbidden([] { return fork() >= 0 ? 0 : 1; }, "clone");
  ExpectForbidden([] { return static_cast<int>(syscall(SYS_vfork)); }, "vfork");
  ExpectForbidden([] { return execl("/bin/true", "true", nullptr); }, "execve");
}

TEST(SandboxTest, RefusesOtherProcesses) {
  ExpectForbidden([] { return static_cast<int>(ptrace(PTRACE_TRACEME, 0, nullptr, nullptr)); },
                  "ptrace");
  ExpectForbidden([] { return kill(getppid(), 0); }, "kill");
  ExpectForbidden([] { return kill(0, 0); }, "kill");  // the process group
  ExpectForbidden(
      [] {
        const struct rlimit none = {0, 0};
        return prlimit(getppid(), RLIMIT_NOFILE, &none, nullptr);
      },
      "prlimit64");
}

TEST(SandboxTest, RefusesWritingTheFileSystem) {
  const std::string dir =
      std::getenv("TEST_TMPDIR") != nullptr ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string existing = dir + "/sandbox_existing";
  {
    FILE* file = fopen(existing.c_str(), "w");
    ASSERT_NE(file, nullptr);
    fclose(file);
  }
  const char* path = existing.c_str();
  ExpectForbidden([path] { return open(path, O_RDWR); }, "openat");
  ExpectForbidden([path] { return open(path, O_WRONLY | O_APPEND); }, "openat");
  ExpectForbidden([path] { return open(path, O_RDONLY | O_TRUNC); }, "openat");
  ExpectForbidden(
      [] { return static_cast<int>(syscall(SYS_open, "/tmp/x", O_RDONLY | O_CREAT, 0600)); },
      "open");
  ExpectForbidden([path] { return unlink(path); }, "unlink");
  ExpectForbidden([path] { return rename(path, "/tmp/renamed"); }, "rename");
  ExpectForbidden([] { return mkdir("/tmp/sandbox_dir", 0700); }, "mkdir");
  ExpectForbidden([path] { return chmod(path, 0777); }, "chmod");
  ExpectForbidden([path] { return truncate(path, 0); }, "truncate");
  ExpectForbidden([path] { return symlink(path, "/tmp/sandbox_link"); }, "symlink");
  ExpectForbidden([] { return static_cast<int>(syscall(SYS_io_uring_setup, 1, nullptr)); },
                  "io_uring_setup");
  struct stat info;
  EXPECT_EQ(stat(path, &info), 0) << "the file must still be there";
  unlink(path);
}

TEST(SandboxTest, TheSigsysReporterCannotBeReplaced) {
  ExpectForbidden([] { return signal(SIGSYS, SIG_IGN) == SIG_ERR ? 1 : 0; }, "rt_sigaction");
}

TEST(SandboxTest, BlockingSigsysStillStopsTheProcess) {
  ChildEnd end = RunSandboxed([] {
    sigset_t sigsys;
    sigemptyset(&sigsys);
    sigaddset(&sigsys, SIGSYS);
    sigprocmask(SIG_BLOCK, &sigsys, nullptr);
    return socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 1;
  });
  EXPECT_TRUE(end.KilledBy(SIGSYS)) << end.wait_status;
}

// Everything the runner child and a kernel need. Each failed check exits
// with its own code.
TEST(SandboxTest, AllowsWhatAKernelRunNeeds) {
  const std::string kernel = testing::ReadTestKernel("libdense_ok.so");
  ChildEnd end = RunSandboxed([&kernel] {
    const int status_fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (status_fd < 0) return 1;
    close(status_fd);
    // A kernel arrives in a memfd and is dlopened: openat read-only and
    // mmap with PROT_EXEC.
    absl::StatusOr<SharedObject> loaded = SharedObject::LoadFromBytes(kernel, "dense_ok");
    if (!loaded.ok()) {
      fprintf(stderr, "%s\n", std::string(loaded.status().message()).c_str());
      return 2;
    }
    int value = 0;
    std::thread thread([&value] { value = 7; });  // clone3 -> ENOSYS -> clone(CLONE_THREAD)
    thread.join();
    if (value != 7) return 3;
    if (kill(getpid(), 0) != 0) return 4;
    const int memfd = memfd_create("scratch", MFD_CLOEXEC);
    if (memfd < 0 || write(memfd, "x", 1) != 1) return 5;
    void* executable =
        mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (executable == MAP_FAILED) return 6;
    struct sigaction query;
    if (sigaction(SIGSYS, nullptr, &query) != 0) return 7;  // reading is fine
    return 0;
  });
  EXPECT_EQ(end.ExitCode(), 0) << "wait status " << end.wait_status << ", forbidden "
                               << end.forbidden;
}

TEST(SandboxTest, SetsTheLimits) {
  ChildEnd end = RunSandboxed([] {
    struct rlimit limit;
    getrlimit(RLIMIT_AS, &limit);
    if (limit.rlim_cur != static_cast<rlim_t>(kLimits.memory_limit_bytes) ||
        limit.rlim_max != limit.rlim_cur) {
      return 1;
    }
    getrlimit(RLIMIT_FSIZE, &limit);
    if (limit.rlim_cur != static_cast<rlim_t>(kLimits.file_size_limit_bytes)) return 2;
    getrlimit(RLIMIT_CPU, &limit);
    if (limit.rlim_cur != 60 || limit.rlim_max != 61) return 3;
    getrlimit(RLIMIT_CORE, &limit);
    if (limit.rlim_max != 0) return 4;
    // Raising one back is refused (soft = hard, and no privilege).
    limit = {RLIM_INFINITY, RLIM_INFINITY};
    if (setrlimit(RLIMIT_AS, &limit) == 0) return 5;
    // Beyond the memory limit, allocation fails instead of succeeding.
    if (malloc(size_t{5} << 30) != nullptr) return 6;
    return 0;
  });
  EXPECT_EQ(end.ExitCode(), 0) << "wait status " << end.wait_status;
}

TEST(SandboxTest, WritesBeyondTheFileSizeLimitFailWithEfbig) {
  ChildEnd end = RunSandboxed([] {
    const int fd = memfd_create("big", MFD_CLOEXEC);
    if (fd < 0) return 1;
    std::string chunk(kLimits.file_size_limit_bytes, 'x');
    if (write(fd, chunk.data(), chunk.size()) != static_cast<ssize_t>(chunk.size())) return 2;
    return write(fd, "y", 1) < 0 && errno == EFBIG ? 0 : 3;
  });
  EXPECT_EQ(end.ExitCode(), 0) << "wait status " << end.wait_status;
}

TEST(SandboxTest, RefusesNonPositiveLimits) {
  SandboxLimits limits = kLimits;
  limits.cpu_limit_s = 0;
  // Checked before anything is applied, so safe in the test process itself.
  EXPECT_EQ(EnterSandbox(limits, nullptr, {}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(SandboxTest, RefusesWritableAndExecutableMemory) {
  ExpectForbidden(
      [] {
        return mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                    -1, 0) != MAP_FAILED
                   ? 0
                   : 1;
      },
      "mmap");
  ExpectForbidden(
      [] {
        void* page =
            mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        return mprotect(page, 4096, PROT_READ | PROT_EXEC);
      },
      "mprotect");
}

TEST(SandboxTest, AllowsOnlyWhatARunNeeds) {
  using ::testing::Contains;
  using ::testing::Not;
  using ::testing::StrEq;
  EXPECT_THAT(SandboxAllowedSyscalls(),
              ::testing::IsSupersetOf({StrEq("read"), StrEq("futex"), StrEq("munmap")}));
  for (const char* refused :
       {"socket", "execve", "ptrace", "unlink", "ftruncate", "openat", "fcntl", "sched_setaffinity",
        "kill", "ioctl", "clone", "mmap", "mprotect", "pipe2"}) {
    EXPECT_THAT(SandboxAllowedSyscalls(), Not(Contains(StrEq(refused))))
        << refused << " must be refused, or allowed only for some arguments";
  }
}

}  // namespace
}  // namespace tunefleet
